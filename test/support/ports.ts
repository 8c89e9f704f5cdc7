import { getFreePort } from '../../src/infrastructure/server/index.ts';

/** A port nothing listens on: taken from the system, then let go (to point a client at a dead address). */
export const closedPort = getFreePort;
