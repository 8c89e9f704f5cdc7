import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionConfig } from '../../src/cli/config.ts';
import { resolveTemporalConnection } from '../../src/infrastructure/connection.ts';

// HOME points nowhere so a developer's own ~/.config/temporalio/temporal.toml cannot leak in.
const bare = { HOME: '/nonexistent' };

describe('Temporal connection settings (envconfig)', () => {
  let dir: string;
  let configFile: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-envconfig-'));
    await writeFile(path.join(dir, 'ca.pem'), 'CA-PEM');
    await writeFile(path.join(dir, 'client.pem'), 'CERT-PEM');
    await writeFile(path.join(dir, 'client.key'), 'KEY-PEM');
    configFile = path.join(dir, 'temporal.toml');
    await writeFile(
      configFile,
      [
        '[profile.default]',
        'address = "127.0.0.1:7233"',
        '[profile.cloud]',
        'address = "acme.a1b2c.tmprl.cloud:7233"',
        'namespace = "acme.a1b2c"',
        'api_key = "cloud-key"',
        '[profile.selfhosted]',
        'address = "temporal.internal:7233"',
        'namespace = "agents"',
        '[profile.selfhosted.tls]',
        `client_cert_path = "${path.join(dir, 'client.pem')}"`,
        `client_key_path = "${path.join(dir, 'client.key')}"`,
        `server_ca_cert_path = "${path.join(dir, 'ca.pem')}"`,
        'server_name = "temporal.internal"',
      ].join('\n'),
    );
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('defaults to the embedded dev server without TLS', () => {
    expect(resolveTemporalConnection({ env: bare })).toEqual({
      connectionOptions: { address: '127.0.0.1:7233' },
      namespace: 'default',
    });
  });

  it('reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TEMPORAL_API_KEY; an API key turns TLS on', () => {
    const resolved = resolveTemporalConnection({
      env: {
        ...bare,
        TEMPORAL_ADDRESS: 'eu.tmprl.cloud:7233',
        TEMPORAL_NAMESPACE: 'ns.acct',
        TEMPORAL_API_KEY: 'k',
      },
    });
    expect(resolved).toEqual({
      connectionOptions: { address: 'eu.tmprl.cloud:7233', apiKey: 'k', tls: true },
      namespace: 'ns.acct',
    });
  });

  it('treats empty variables (a compose pass-through) as unset', () => {
    const resolved = resolveTemporalConnection({
      env: { ...bare, TEMPORAL_ADDRESS: '', TEMPORAL_API_KEY: '', TEMPORAL_NAMESPACE: '' },
    });
    expect(resolved.connectionOptions).toEqual({ address: '127.0.0.1:7233' });
    expect(resolved.namespace).toBe('default');
  });

  it('reads mTLS certificate, key and CA from the environment', () => {
    const { connectionOptions } = resolveTemporalConnection({
      env: {
        ...bare,
        TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
        TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      },
    });
    const tls = connectionOptions.tls as Record<string, unknown> & {
      clientCertPair: { crt: Uint8Array; key: Uint8Array };
      serverRootCACertificate: Uint8Array;
    };
    expect(tls.serverNameOverride).toBe('temporal.internal');
    expect(Buffer.from(tls.serverRootCACertificate).toString()).toBe('CA-PEM');
    expect(Buffer.from(tls.clientCertPair.crt).toString()).toBe('CERT-PEM');
    expect(Buffer.from(tls.clientCertPair.key).toString()).toBe('KEY-PEM');
  });

  it('selects a profile of the config file by flag or TEMPORAL_PROFILE; env and options override it', () => {
    const env = { ...bare, TEMPORAL_CONFIG_FILE: configFile };
    expect(resolveTemporalConnection({ env, profile: 'cloud' })).toEqual({
      connectionOptions: { address: 'acme.a1b2c.tmprl.cloud:7233', apiKey: 'cloud-key', tls: true },
      namespace: 'acme.a1b2c',
    });
    const selfHosted = resolveTemporalConnection({ env: { ...env, TEMPORAL_PROFILE: 'selfhosted' } });
    expect(selfHosted.namespace).toBe('agents');
    expect(selfHosted.connectionOptions.tls).toMatchObject({ serverNameOverride: 'temporal.internal' });
    expect(
      resolveTemporalConnection({
        env: { ...env, TEMPORAL_NAMESPACE: 'other' },
        profile: 'cloud',
        address: 'x:1',
      }),
    ).toMatchObject({ connectionOptions: { address: 'x:1' }, namespace: 'other' });
  });

  it('names a profile that does not exist', () => {
    expect(() =>
      resolveTemporalConnection({ env: { ...bare, TEMPORAL_CONFIG_FILE: configFile }, profile: 'nope' }),
    ).toThrow("Profile 'nope' not found");
  });

  it('the CLI uses the same resolution: flags over env over profile', () => {
    const env = { ...bare, TEMPORAL_CONFIG_FILE: configFile, YIEM_TASK_QUEUE: 'q' };
    expect(connectionConfig({ profile: 'cloud' }, env)).toEqual({
      address: 'acme.a1b2c.tmprl.cloud:7233',
      namespace: 'acme.a1b2c',
      taskQueue: 'q',
      profile: 'cloud',
      tls: true,
    });
    expect(connectionConfig({ address: '127.0.0.1:9999' }, bare)).toMatchObject({
      address: '127.0.0.1:9999',
      tls: false,
    });
  });
});
