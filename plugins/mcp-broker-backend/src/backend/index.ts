/*
 * The backend layer's entry for the plugin's wiring: tool calls with progress, elicitation and
 * cancellation (spec §4), i.e. the broker's ToolCallHandler, and the elicitation id store seam.
 * McpBroker uses BackendConnection from its own file.
 */
export {
  StreamingToolCallHandler,
  createStreamingToolCallHandler,
} from './StreamingToolCallHandler';
export { ElicitationIdMap, MemoryElicitationIdStore, isGatewayId } from './ElicitationIdMap';
export type { ElicitationIdStore, ElicitationMapping } from './ElicitationIdMap';
export { BackendSessionPool } from './BackendSessionPool';
export { ToolCallForwarder } from './ToolCallForwarder';
