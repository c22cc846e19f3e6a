// Settings → "Recording and transcription" as a form: checked with the main process's schema (the
// purpose required when a box is ticked, at most 250 characters after trimming), every error naming
// its field; the main process's refusals placed at the field they name; the notice's languages named.
import { describe, expect, test } from 'vitest';
import { DEFAULT_SERVICE_CAPTURE } from '../../../shared/service-capture';
import { announcementLanguageName, captureErrorsFrom, draftFromCapture, validateCaptureDraft } from '../../../renderer/store/service-capture-form';

describe('the recording form', () => {
  test('starts from what is saved, or nothing asked for', () => {
    expect(draftFromCapture(undefined)).toEqual(DEFAULT_SERVICE_CAPTURE);
    expect(draftFromCapture({ record: true, transcribe: false, purpose: 'QA', language: 'hi' })).toEqual({ record: true, transcribe: false, purpose: 'QA', language: 'hi' });
  });

  test('a purpose is required when either box is ticked, and is sent trimmed', () => {
    expect(validateCaptureDraft({ ...DEFAULT_SERVICE_CAPTURE, record: true })).toEqual({ ok: false, errors: { purpose: 'Purpose is required' } });
    expect(validateCaptureDraft({ ...DEFAULT_SERVICE_CAPTURE, transcribe: true, purpose: '  ' })).toEqual({ ok: false, errors: { purpose: 'Purpose is required' } });
    expect(validateCaptureDraft(DEFAULT_SERVICE_CAPTURE)).toEqual({ ok: true, input: DEFAULT_SERVICE_CAPTURE });
    expect(validateCaptureDraft({ ...DEFAULT_SERVICE_CAPTURE, record: true, purpose: ' QA ' })).toEqual({ ok: true, input: { ...DEFAULT_SERVICE_CAPTURE, record: true, purpose: 'QA' } });
  });

  test('at most 250 characters', () => {
    expect(validateCaptureDraft({ ...DEFAULT_SERVICE_CAPTURE, record: true, purpose: 'x'.repeat(251) })).toEqual({ ok: false, errors: { purpose: 'Purpose must be at most 250 characters' } });
    expect(validateCaptureDraft({ ...DEFAULT_SERVICE_CAPTURE, record: true, purpose: `${'x'.repeat(250)} ` }).ok).toBe(true);
  });

  test('the main process\'s refusal: each issue at the field it names, the rest for the form', () => {
    expect(captureErrorsFrom({ message: 'x', issues: [{ field: 'serviceCapture.purpose', text: { code: 'common.required' } }] })).toEqual({ fields: { purpose: 'Purpose is required' }, form: null });
    expect(captureErrorsFrom({ message: 'x', issues: [{ field: 'serviceCapture.other', text: 'is odd' }] })).toEqual({ fields: {}, form: 'serviceCapture.other: is odd' });
    expect(captureErrorsFrom({ message: 'The disk is full' })).toEqual({ fields: {}, form: 'The disk is full' });
  });

  test('each notice language by name in the window\'s language', () => {
    expect(announcementLanguageName('en_GB', 'en')).toBe('British English');
    expect(announcementLanguageName('pt_BR', 'en')).toBe('Brazilian Portuguese');
    expect(announcementLanguageName('hi', 'es')).toBe('hindi');
  });
});
