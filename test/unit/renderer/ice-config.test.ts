// The window's copy of the ICE configuration (renderer/webrtc/ice-config.ts): asked of the main
// process ahead of calls, kept until the settings change or the relay's TURN credentials in it near
// their end, and never lost to a failed question. The main process here is a plain object that
// answers getIceConfig the way the SoftphoneApi contract says (a Result, never a rejection).
import { beforeEach, describe, expect, it } from 'vitest';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { sayError } from '../../../renderer/i18n/texts';
import { IceConfigSource } from '../../../renderer/webrtc/ice-config';
import type { SoftphoneApi } from '../../../shared/api';
import { text } from '../../../shared/i18n/text';
import type { IceConfig } from '../../../shared/ice-servers';
import { configureLogging } from '../../../shared/log';
import { err, errText, ok, type Result } from '../../../shared/result';
import { FakeClock } from '../../support/fake-clock';

const logLines: string[] = [];
configureLogging({ level: 'debug', sink: (line) => logLines.push(line) });

const T0 = 1_700_000_000_000;
const STUN_ONLY: IceConfig = { iceServers: [{ urls: ['stun:stun.example.com'] }], iceTransportPolicy: 'all' };
const withTurn = (expiresAt: number, username = `${Math.floor(expiresAt / 1000)}:alice`): IceConfig => ({
  iceServers: [{ urls: ['stun:stun.example.com'] }, { urls: ['turn:turn.example.com:3478'], username, credential: 'Yw==' }],
  iceTransportPolicy: 'relay',
  expiresAt,
});

/** Answers getIceConfig from a queue of answers (the last one repeats); an answer may be held back until released. */
class MainProcess implements Pick<SoftphoneApi, 'getIceConfig'> {
  asked = 0;
  private readonly answers: Array<Result<IceConfig> | (() => Promise<Result<IceConfig>>)> = [];
  private last: Result<IceConfig> = ok(STUN_ONLY);

  answer(...answers: Array<Result<IceConfig> | (() => Promise<Result<IceConfig>>)>): this {
    this.answers.push(...answers);
    return this;
  }

  /** An answer that comes when the test says so. */
  held(answer: Result<IceConfig>): () => void {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    this.answers.push(async () => {
      await gate;
      return answer;
    });
    return release;
  }

  getIceConfig = async (_params: Record<string, never>): Promise<Result<IceConfig>> => {
    this.asked++;
    const next = this.answers.shift();
    if (typeof next === 'function') return next();
    if (next !== undefined) this.last = next;
    return this.last;
  };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

let clock = new FakeClock(T0);
beforeEach(() => {
  clock = new FakeClock(T0);
  logLines.length = 0;
});

describe('IceConfigSource', () => {
  it('asks once and keeps a configuration without relay credentials until the settings change', async () => {
    const main = new MainProcess().answer(ok(STUN_ONLY));
    const source = new IceConfigSource(main, clock.now);
    expect(main.asked).toBe(0);
    expect(await source.get()).toEqual({ ok: true, value: STUN_ONLY });
    clock.advance(24 * 3600_000);
    expect(await source.get()).toEqual({ ok: true, value: STUN_ONLY });
    expect(main.asked).toBe(1);
  });

  it('asks once for calls that start together', async () => {
    const main = new MainProcess().answer(ok(STUN_ONLY));
    const source = new IceConfigSource(main, clock.now);
    const answers = await Promise.all([source.get(), source.get(), source.get()]);
    expect(answers).toEqual([ok(STUN_ONLY), ok(STUN_ONLY), ok(STUN_ONLY)]);
    expect(main.asked).toBe(1);
  });

  it('asks again, at once, when the settings change; the next call gets the new configuration', async () => {
    const relayOnly: IceConfig = { iceServers: [], iceTransportPolicy: 'relay' };
    const main = new MainProcess().answer(ok(STUN_ONLY), ok(relayOnly));
    const source = new IceConfigSource(main, clock.now);
    expect(await source.get()).toEqual(ok(STUN_ONLY));
    source.invalidate();
    // Fetched ahead: the question is out before any call asks.
    expect(main.asked).toBe(2);
    expect(await source.get()).toEqual(ok(relayOnly));
    expect(main.asked).toBe(2);
  });

  it("asks again once the relay's credentials have a minute or less to live", async () => {
    const first = withTurn(T0 + 600_000);
    const second = withTurn(T0 + 1_200_000);
    const main = new MainProcess().answer(ok(first), ok(second));
    const source = new IceConfigSource(main, clock.now);
    expect(await source.get()).toEqual(ok(first));
    clock.t = T0 + 600_000 - 60_001;
    expect(await source.get()).toEqual(ok(first));
    expect(main.asked).toBe(1);
    clock.t = T0 + 600_000 - 60_000;
    expect(await source.get()).toEqual(ok(second));
    expect(main.asked).toBe(2);
    expect(await source.get()).toEqual(ok(second));
    expect(main.asked).toBe(2);
  });

  it('keeps the last good configuration when renewing it fails: "Relay only" stays relay only', async () => {
    const good = withTurn(T0 + 600_000);
    const main = new MainProcess().answer(ok(good), err('timeout', 'The host did not answer'));
    const source = new IceConfigSource(main, clock.now);
    expect(await source.get()).toEqual(ok(good));
    clock.t = T0 + 590_000;
    expect(await source.get()).toEqual(ok(good));
    expect(main.asked).toBe(2);
    expect(logLines.join('\n')).toContain('the network settings could not be read');
    // The failure is not kept: the next call asks again and gets the answer that comes now.
    main.answer(ok(STUN_ONLY));
    expect(await source.get()).toEqual(ok(STUN_ONLY));
    expect(main.asked).toBe(3);
  });

  it('after a settings change, a failed question is an error, never the configuration the agent replaced', async () => {
    const main = new MainProcess().answer(ok(STUN_ONLY), err('gateway_unreachable', 'The host could not be reached'));
    const source = new IceConfigSource(main, clock.now);
    expect(await source.get()).toEqual(ok(STUN_ONLY));
    source.invalidate();
    await settle();
    expect(main.asked).toBe(2);
    main.answer(err('gateway_unreachable', 'The host could not be reached'));
    expect(await source.get()).toEqual({
      ok: false,
      error: {
        code: 'gateway_unreachable',
        message: 'The network settings could not be read (The host could not be reached).',
        text: text('callMedia.networkSettingsUnread', { problem: 'The host could not be reached' }),
      },
    });
    expect(main.asked).toBe(3);
  });

  it('says why when it has never had a configuration, and asks again next time', async () => {
    const main = new MainProcess().answer(err('gateway_unreachable', 'The host could not be reached'), ok(STUN_ONLY));
    const source = new IceConfigSource(main, clock.now);
    expect(await source.get()).toEqual({
      ok: false,
      error: {
        code: 'gateway_unreachable',
        message: 'The network settings could not be read (The host could not be reached).',
        text: text('callMedia.networkSettingsUnread', { problem: 'The host could not be reached' }),
      },
    });
    expect(await source.get()).toEqual(ok(STUN_ONLY));
    expect(main.asked).toBe(2);
  });

  it('says it in the agent\u2019s language: the sentence and, when the main process gave its reason as a text, that reason too', async () => {
    const shuttingDown = text('service.shuttingDown');
    const main = new MainProcess().answer(errText('not_available', shuttingDown), err('gateway_unreachable', 'The host could not be reached'));
    const source = new IceConfigSource(main, clock.now);
    const said = await source.get();
    expect(said).toEqual({
      ok: false,
      error: { code: 'not_available', message: 'The network settings could not be read (The softphone is shutting down).', text: text('callMedia.networkSettingsUnread', { problem: shuttingDown }) },
    });
    const worded = await source.get();
    try {
      await setUiLanguage('es', undefined);
      expect(said.ok ? undefined : sayError(said.error)).toBe('No se pudo leer la configuración de red (El softphone se está cerrando).');
      // A reason that came in words (none of the catalogue's) is kept as it came, inside the agent's sentence.
      expect(worded.ok ? undefined : sayError(worded.error)).toBe('No se pudo leer la configuración de red (The host could not be reached).');
    } finally {
      await setUiLanguage('en', undefined);
    }
  });

  it('refuses an answer that is no ICE configuration, naming the field, and keeps none of it', async () => {
    const main = new MainProcess().answer(ok({ iceServers: [{ urls: 'turn:turn.example.com' }], iceTransportPolicy: 'relay' } as IceConfig));
    const source = new IceConfigSource(main, clock.now);
    const answer = await source.get();
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_input', message: expect.stringContaining('iceServers[0].credential: a TURN server needs its username and credential') as unknown } });

    const good = withTurn(T0 + 600_000);
    const bad = new MainProcess().answer(ok(good), ok({ ...good, iceTransportPolicy: 'none' } as unknown as IceConfig));
    const kept = new IceConfigSource(bad, clock.now);
    expect(await kept.get()).toEqual(ok(good));
    clock.t = T0 + 590_000;
    expect(await kept.get()).toEqual(ok(good));
    expect(bad.asked).toBe(2);
  });

  it('does not keep an answer that was asked for before the settings changed', async () => {
    const before: IceConfig = { iceServers: [{ urls: 'stun:old.example.com' }], iceTransportPolicy: 'all' };
    const after: IceConfig = { iceServers: [{ urls: 'stun:new.example.com' }], iceTransportPolicy: 'relay' };
    const main = new MainProcess();
    const releaseOld = main.held(ok(before));
    const releaseNew = main.held(ok(after));
    const source = new IceConfigSource(main, clock.now);
    const early = source.get();
    source.invalidate();
    expect(main.asked).toBe(2);
    releaseOld();
    // The call that asked first gets what it asked for; the copy kept is the new one.
    expect(await early).toEqual(ok(before));
    const late = source.get();
    releaseNew();
    expect(await late).toEqual(ok(after));
    expect(await source.get()).toEqual(ok(after));
    expect(main.asked).toBe(2);
  });

  it('never logs the credentials it carries', async () => {
    const main = new MainProcess().answer(ok(withTurn(T0 + 600_000, 'u-secret-name')), err('gateway_unreachable', 'down'));
    const source = new IceConfigSource(main, clock.now);
    await source.get();
    source.invalidate();
    await settle();
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('\n')).not.toContain('Yw==');
  });
});
