// An update's failure travels as a rule of the catalogue with its values: its English (the status's
// `message`, the logs) is the sentence it always was, and the window says it in the agent's language.
import { afterEach, describe, expect, it } from 'vitest';
import { describeUpdateError, UPDATE_INACTIVE, UPDATE_INACTIVE_REASON } from '../../../electron/desktop/update-service';
import { english } from '../../../shared/i18n/text';
import { parsePush } from '../../../renderer/bridge/payload-schemas';
import { updateStatusText } from '../../../renderer/components/UpdateSettings';
import { setUiLanguage } from '../../../renderer/i18n/i18n';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

const failure = (fields: Record<string, unknown>, message = 'boom\n    at stack'): Error => Object.assign(new Error(message), fields);

describe("an update's failure, said", () => {
  it('in English, word for word what the status and the logs always said', () => {
    const cases: [Error, string | undefined, string][] = [
      [failure({ code: 'ERR_CHECKSUM_MISMATCH' }), '1.1.0', 'The update 1.1.0 was discarded: the downloaded file does not match the sha512 checksum the feed gives for it'],
      [failure({ code: 'ERR_CHECKSUM_MISMATCH' }), undefined, 'The update was discarded: the downloaded file does not match the sha512 checksum the feed gives for it'],
      [failure({ code: 'ERR_UPDATER_CHANNEL_FILE_NOT_FOUND' }, 'Cannot find channel "beta-linux.yml" update info'), undefined, 'The update feed has no beta-linux.yml: check the feed address and that the channel is published there'],
      [failure({ code: 'ERR_UPDATER_CHANNEL_FILE_NOT_FOUND' }, 'nothing here'), undefined, 'The update feed has no file for this channel: check the feed address and that the channel is published there'],
      [failure({ code: 'ERR_UPDATER_INVALID_UPDATE_INFO' }, 'bad yaml\nline 2'), undefined, 'The update feed’s answer is not valid update information: bad yaml'],
      [failure({ code: 'ECONNREFUSED' }), undefined, 'The update feed could not be reached (ECONNREFUSED)'],
      [failure({ statusCode: 404 }), undefined, 'The update feed answered HTTP 404'],
      [failure({}, 'something odd\n    at x'), undefined, 'The update failed: something odd'],
    ];
    for (const [e, version, said] of cases) expect(english(describeUpdateError(e, version))).toBe(said);
    expect(UPDATE_INACTIVE_REASON).toBe(
      'This copy of the softphone does not update itself: only an installed app does (an AppImage or a .deb on Linux, the installer’s app on Windows and macOS), not one run from source or from an unpacked folder.',
    );
    expect(english(UPDATE_INACTIVE)).toBe(UPDATE_INACTIVE_REASON);
  });

  it("in the agent's language on Settings → Updates, the status's English kept only for an old main process", async () => {
    const text = describeUpdateError(failure({ code: 'ECONNREFUSED' }));
    const pushed = parsePush('updateStatus', { kind: 'error', message: english(text), text, at: 1 });
    expect(pushed.ok).toBe(true);
    if (!pushed.ok) return;
    await setUiLanguage('es', undefined);
    const spanish = updateStatusText(pushed.value);
    expect(spanish).toContain('No se pudo acceder al canal de actualizaciones (ECONNREFUSED)');
    expect(spanish).not.toContain('could not be reached');
    // A status without its text (an older main process) still says the English it has.
    expect(updateStatusText({ kind: 'error', message: 'The update feed answered HTTP 500', at: 1 })).toContain('The update feed answered HTTP 500');
  });
});
