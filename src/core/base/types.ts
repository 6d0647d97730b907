/** The end-of-plan token: a candidate like any tool, which retrievers must learn to predict. */
export const END = 'END';

/** JSON Schema for a tool's arguments (the subset tool formats use). */
export type JsonSchema = { [key: string]: unknown };

/** A tool: its name, what it does, the JSON Schema of its arguments and, optionally, of its output. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object, when known. */
  parameters?: JsonSchema;
  /** JSON Schema of what the tool returns, when known (MCP's outputSchema, Seal-Tools' responses). */
  returns?: JsonSchema;
}

/** One call of a plan: the tool, and its arguments where the demonstration has them. */
export interface PlanNode {
  tool: string;
  arguments?: unknown;
}

/** One demonstration: a query and the DAG of calls that solved it. */
export interface Plan {
  id: string;
  query: string;
  /** Calls of the plan; a tool may occur more than once (nodes are instances, not names). */
  nodes: PlanNode[];
  /** Data dependencies between node indices: [source, target]. */
  edges: [number, number][];
  /** Node indices in a topological order that keeps the listed order where it is consistent. */
  order: number[];
}

/** One step of walking a plan with the ground-truth history (teacher forcing). */
export interface PlanStep {
  planId: string;
  query: string;
  /** Tools called so far, in order. */
  history: string[];
  /** F*_t: every tool that may come next (the DAG frontier), or [END] after the last call. */
  acceptable: string[];
}

/** Tools and demonstrations, as read from a dataset folder. */
export interface Dataset {
  name: string;
  tools: ToolSpec[];
  plans: Plan[];
  /** Plan ids of the official test split, when the dataset ships one. */
  testIds?: string[];
}
