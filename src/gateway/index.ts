/**
 * dtdr's MCP gateway as a library: what `dtdr gateway` runs, for an app that hosts it itself.
 * Needs `@modelcontextprotocol/sdk` (an optional peer of dtdr).
 *
 *   const servers = readGatewayConfig('mcp.json');              // the standard mcpServers config
 *   const gateway = await Gateway.start({ servers, encoder: await loadEncoder(), modelPath: 'gateway.model.dtdr' });
 *   await serveHttp(gateway, { port: 3333, mode: 'search', maxMessageBytes: 4 * 1024 * 1024 });
 *
 * `sessionServer` gives one MCP `Server` per client session, for a transport of your own.
 * docs/gateway.md says what clients see, what is stored, and the security rules.
 *
 * @module dtdr/gateway
 */
export { Gateway } from './gateway.js';
export type { CallResult, FoundTools, GatewayMode, GatewayOptions, ToolView } from './gateway.js';
export { parseGatewayConfig, readGatewayConfig } from './config.js';
export type { HttpUpstreamConfig, StdioUpstreamConfig, UpstreamConfig } from './config.js';
export { GatewaySession } from './session.js';
export type { CallCheck, LiveTool } from './session.js';
export { serveStdio, sessionServer } from './server.js';
export type { SessionServerOptions } from './server.js';
export { serveHttp } from './http.js';
export type { HttpOptions } from './http.js';
export type { UpstreamLimits } from './upstream.js';
