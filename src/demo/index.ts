/**
 * The 27-tool phone-assistant world that `npm start`, the playground and the examples use: its
 * tools, example requests and generated demonstrations.
 *
 * @module dtdr/demo
 */
export { DEMO_QUERIES, DEMO_TOOLS, demoDataset } from './toolset.js';
