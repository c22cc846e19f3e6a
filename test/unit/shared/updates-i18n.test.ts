// The update refusals the window shows (renderer/app/update-actions.ts) come from the rule
// catalogue: said in the agent's language, a field's name left out since the error shows beside it.
import { afterEach, describe, expect, it } from 'vitest';
import { updateRefusalText } from '../../../renderer/app/update-actions';
import { setUiLanguage } from '../../../renderer/i18n/i18n';
import { parseWith } from '../../../shared/validation';
import { updateSettingsSchema } from '../../../shared/updates';

afterEach(async () => {
  await setUiLanguage('en', undefined);
});

describe('an update refusal in the window', () => {
  it('shows the feed address rule without its field, in the agent’s language', async () => {
    const refused = parseWith(updateSettingsSchema, { feedUrl: 'https://it:pw@updates.example.com/', channel: 'stable' });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    const error = { ...refused.error, field: `settings.${refused.error.field ?? ''}`, message: `settings.${refused.error.message}` };
    expect(updateRefusalText(error)).toBe('must not contain a user name or password');
    await setUiLanguage('es', undefined);
    expect(updateRefusalText(error)).toBe('no debe contener un nombre de usuario ni una contraseña');
  });

  it('says "does not restart during a call" and a cancelled feed change in the agent’s language', async () => {
    await setUiLanguage('pt-BR', undefined);
    expect(
      updateRefusalText({ code: 'invalid_state', message: 'The softphone does not restart during a call (a call is ringing): restart to update once it has ended' }),
    ).toBe('O softphone não reinicia durante uma chamada (uma chamada está tocando): reinicie para atualizar quando ela terminar');
    expect(updateRefusalText({ code: 'invalid_state', message: 'No update is ready to install' })).toBe('Nenhuma atualização está pronta para instalar');
    expect(updateRefusalText({ code: 'invalid_state', message: 'The update feed was not changed: https://updates.example.com/ was not confirmed' })).toBe(
      'O feed de atualizações não foi alterado: https://updates.example.com/ não foi confirmado',
    );
  });
});
