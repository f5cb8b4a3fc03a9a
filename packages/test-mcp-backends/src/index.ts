/**
 * MCP servers for the broker's tests.
 *
 * @packageDocumentation
 */
export { startRawMcpBackend } from './rawBackend';
export type {
  RawMcpBackend,
  RawMcpBackendOptions,
  RecordedAnswer,
  RecordedCancellation,
  RecordedCallEvent,
  RecordedRequest,
} from './rawBackend';
export { jsonIdType, rawTopLevelMember } from './rawJson';
export { sseMessages } from './sseMessages';
export { startEverythingServer } from './everythingServer';
export type { EverythingServer } from './everythingServer';
export { startExampleAppServer } from './exampleAppServer';
export type { ExampleAppKind, ExampleAppServer } from './exampleAppServer';
export {
  BOARD_UI_HTML,
  BOARD_UI_URI,
  BOARD_VIEWS_TEMPLATE,
  startUiNegotiatingAppServer,
} from './uiNegotiatingAppServer';
export type { UiNegotiatingAppServer } from './uiNegotiatingAppServer';
export { startConformanceBackend } from './conformanceBackend';
export type { ConformanceBackend } from './conformanceBackend';
export { startUnreachableServer } from './unreachableServer';
export type { UnreachableServer } from './unreachableServer';
export { reservePortForChild } from './handedOverPort';
export { startChildServer } from './childServer';
export { superviseChildProcess } from './superviseChildProcess';
export type { SupervisedChildProcess, SuperviseChildProcessOptions } from './superviseChildProcess';
export type { ChildServer, ChildServerOptions } from './childServer';
export type { HandedOverPort } from './handedOverPort';
export { startTokenExchangeServer } from './tokenExchangeServer';
export { signedByJwks } from './jwksSignature';
export type {
  InjectedFailure,
  RecordedExchange,
  TokenExchangeServer,
  TokenExchangeServerOptions,
  TrustedIssuer,
} from './tokenExchangeServer';
export { startChangingToolServer } from './changingToolServer';
export type { ChangingToolServer } from './changingToolServer';
export { startMisbehavingServer } from './misbehavingServer';
export type { MisbehavingServer, MisbehavingServerOptions } from './misbehavingServer';
export { startWhoamiServer } from './whoamiServer';
export type {
  ReceivedCredentials,
  WhoamiIdentity,
  WhoamiServer,
  WhoamiServerOptions,
} from './whoamiServer';
export {
  DEFAULT_TASK_TTL_MS,
  DEVELOPMENT_DEPLOY_DURATION_MS,
  startTasksServer,
  TASK_POLL_INTERVAL_MS,
} from './tasksServer';
export type {
  LegacyTasksServer,
  RecordedTaskAnswer,
  RecordedTaskRequest,
  TasksServer,
  TasksServerOptions,
} from './tasksServer';
export type { DeployJob } from './deployJobs';
export { startModernTasksServer, TASKS_EXTENSION } from './modernTasksServer';
export type { ModernTasksServer } from './modernTasksServer';
export { MODERN_TASK_POLL_INTERVAL_MS, MODERN_TASK_TTL_MS } from './modernTaskJobs';
export { validateTaskMessages } from './validateTaskMessages';
export { runTaskScenario, TASK_NOTIFICATIONS_SCENARIO, TASK_SCENARIOS } from './taskConformance';
export type { ConformanceCheck } from './taskConformance';
export type { RecordedTaskMessage } from './validateTaskMessages';
