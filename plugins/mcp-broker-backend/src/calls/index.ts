/*
 * The call machinery's entry for the plugin's wiring: tool calls with progress, elicitation and
 * cancellation (spec §4), i.e. the broker's ToolCallHandler, and the elicitation id store seam.
 */
export { StreamingToolCallHandler } from './StreamingToolCallHandler';
export { createStreamingToolCallHandler } from './createStreamingToolCallHandler';
export { ElicitationIdMap, MemoryElicitationIdStore, isGatewayId } from './ElicitationIdMap';
export type { ElicitationIdStore, ElicitationMapping } from './ElicitationIdMap';
export { ToolCalls } from './ToolCalls';
export { urlElicitationPolicy } from './urlElicitations';
export type { UrlElicitationPolicy } from './urlElicitations';
export type { ToolCallHandlerDeps, ToolCallHandlerFactory } from './createStreamingToolCallHandler';
