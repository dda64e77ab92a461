// The variables of running in production (docs/deploy.md): their defaults, and a bad value refused
// with a line naming it.
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { expectRefused, load, SECRETS, tempDir, useTempDirs } from '../test/fixtures/config.js';

useTempDirs();

describe('operations variables', () => {
  it('defaults: /metrics open, 30 s of start-up retries, 30 days of webhook history, no worker metrics port', () => {
    const c = load();
    expect(c).toMatchObject({ metricsToken: null, startupTimeoutS: 30, workerMetricsPort: null });
    expect(c.webhook.retentionDays).toBe(30);
  });

  it('takes valid values', () => {
    const c = load({
      METRICS_TOKEN: 'scrape-me',
      STARTUP_TIMEOUT_S: '0',
      WEBHOOK_RETENTION_DAYS: '7',
      WORKER_METRICS_PORT: '9464',
    });
    expect(c).toMatchObject({ metricsToken: 'scrape-me', startupTimeoutS: 0, workerMetricsPort: 9464 });
    expect(c.webhook.retentionDays).toBe(7);
  });

  it('refuses bad values, naming the variable', () => {
    expectRefused(() => load({ STARTUP_TIMEOUT_S: '30s' }), 'STARTUP_TIMEOUT_S');
    expectRefused(() => load({ STARTUP_TIMEOUT_S: '3601' }), 'STARTUP_TIMEOUT_S');
    expectRefused(() => load({ WEBHOOK_RETENTION_DAYS: '0' }), 'WEBHOOK_RETENTION_DAYS');
    expectRefused(() => load({ WEBHOOK_RETENTION_DAYS: '3651' }), 'WEBHOOK_RETENTION_DAYS');
    expectRefused(() => load({ WORKER_METRICS_PORT: '65536' }), 'WORKER_METRICS_PORT');
  });

  it("an entry point's own default log level (the admin commands: warn) gives way to LOG_LEVEL", () => {
    expect(loadConfig({ DATA_DIR: tempDir(), ...SECRETS }, { logLevel: 'warn' }).logLevel).toBe('warn');
    expect(loadConfig({ DATA_DIR: tempDir(), ...SECRETS, LOG_LEVEL: 'debug' }, { logLevel: 'warn' }).logLevel).toBe(
      'debug',
    );
    expect(load().logLevel).toBe('info');
  });
});
