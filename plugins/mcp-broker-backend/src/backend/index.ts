/*
 * Tool calls with progress, elicitation and cancellation (spec §4): the broker's ToolCallHandler.
 */
export {
  StreamingToolCallHandler,
  createStreamingToolCallHandler,
} from './StreamingToolCallHandler';
export { ElicitationIdMap, MemoryElicitationIdStore, isGatewayId } from './ElicitationIdMap';
export type { ElicitationIdStore, ElicitationMapping } from './ElicitationIdMap';
export { BackendSessionPool } from './BackendSessionPool';
export { ToolCallForwarder } from './ToolCallForwarder';
