// The update refusals the window shows (renderer/app/update-actions.ts) come from the rule
// catalogue: said in the agent's language, a field's name left out since the error shows beside it.
import { afterEach, describe, expect, it } from 'vitest';
import { updateRefusalText } from '../../../renderer/app/update-actions';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { commandSchemas } from '../../../shared/api';
import { term, text, type RuleText } from '../../../shared/i18n/text';
import { errText, type AppError } from '../../../shared/result';
import { parseWith } from '../../../shared/validation';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

describe('an update refusal in the window', () => {
  it('shows the feed address rule without its field, in the agent’s language', async () => {
    // As a host refuses setUpdateSettings: the command's payload checked with its schema.
    const refused = parseWith(commandSchemas.setUpdateSettings, { settings: { feedUrl: 'https://it:pw@updates.example.com/', channel: 'stable' } });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    const error = refused.error;
    expect(error).toMatchObject({ field: 'settings.feedUrl', message: 'settings.feedUrl: must not contain a user name or password' });
    expect(updateRefusalText(error)).toBe('must not contain a user name or password');
    await setUiLanguage('es', undefined);
    expect(updateRefusalText(error)).toBe('no debe contener un nombre de usuario ni una contraseña');
  });

  it('says "does not restart during a call" and a cancelled feed change in the agent’s language', async () => {
    // As electron/desktop/update-service.ts refuses.
    const refusal = (said: RuleText): AppError => {
      const refused = errText('invalid_state', said);
      if (refused.ok) throw new Error('not refused');
      return refused.error;
    };
    const duringCall = refusal(text('updates.restartDuringCall', { call: term('callRinging') }));
    const notReady = refusal(text('updates.notReady'));
    const notConfirmed = refusal(text('updates.feedNotConfirmed', { url: 'https://updates.example.com/' }));
    expect(duringCall.message).toBe('The softphone does not restart during a call (a call is ringing): restart to update once it has ended');
    expect(notReady.message).toBe('No update is ready to install');
    expect(notConfirmed.message).toBe('The update feed was not changed: https://updates.example.com/ was not confirmed');
    await setUiLanguage('pt-BR', undefined);
    expect(updateRefusalText(duringCall)).toBe('O softphone não reinicia durante uma chamada (uma chamada está tocando): reinicie para atualizar quando ela terminar');
    expect(updateRefusalText(notReady)).toBe('Nenhuma atualização está pronta para instalar');
    expect(updateRefusalText(notConfirmed)).toBe('O feed de atualizações não foi alterado: https://updates.example.com/ não foi confirmado');
  });
});
