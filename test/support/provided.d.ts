import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** gRPC address of the Temporal server shared by the whole test run (see globalSetup.ts). */
    temporalAddress: string;
  }
}
