// The composer's forms make messages that pass the shared schemas, and every broken rule lands on
// the field that broke it, as the agent types.
import { describe, expect, it } from 'vitest';
import { messageContentSchema } from '../../../shared/api';
import { parseTemplatePayload } from '../../../shared/templates';
import {
  afterSend,
  afterSendOf,
  callButtonInput,
  checkComposer,
  emptyComposer,
  emptyInteractive,
  interactiveContent,
  mediaContent,
  otherErrors,
  serverErrorsFrom,
  templateValuesFor,
  visibleError,
  type ComposerDraft,
  type InteractiveDraft,
  type InteractiveVariant,
} from '../../../renderer/store/composer';

const TO = '447700900123';
const draft = (patch: Partial<ComposerDraft>): ComposerDraft => ({ ...emptyComposer('text', TO), ...patch });
const interactive = (variant: InteractiveVariant, patch: Partial<InteractiveDraft>): ComposerDraft => draft({ tab: 'interactive', interactive: { ...emptyInteractive(variant), ...patch } });

describe('text and media', () => {
  it('an empty or overlong text names text.body with the rule', () => {
    expect(checkComposer(draft({ text: '' }), TO).errors).toEqual({ 'text.body': 'must not be empty' });
    expect(checkComposer(draft({ text: 'x'.repeat(4097) }), TO).errors).toEqual({ 'text.body': 'must be at most 4096 characters' });
    expect(checkComposer(draft({ text: 'Hello' }), TO)).toEqual({ value: { type: 'text', text: { body: 'Hello' } }, errors: {} });
  });

  it('media: caption only where allowed, filename only for documents, the link checked for its form', () => {
    const media = (type: 'image' | 'audio' | 'document', link: string) => draft({ tab: 'media', media: { type, link, caption: 'A caption', filename: 'file.pdf' } });
    expect(mediaContent(media('audio', 'https://e.com/a.mp3').media)).toEqual({ type: 'audio', audio: { link: 'https://e.com/a.mp3' } });
    expect(mediaContent(media('image', ' https://e.com/a.png ').media)).toEqual({ type: 'image', image: { link: 'https://e.com/a.png', caption: 'A caption' } });
    expect(mediaContent(media('document', 'https://e.com/a.pdf').media)).toEqual({ type: 'document', document: { link: 'https://e.com/a.pdf', caption: 'A caption', filename: 'file.pdf' } });
    expect(checkComposer(media('image', 'e.com/a.png'), TO).errors).toEqual({ 'image.link': 'must be an http:// or https:// address' });
  });
});

describe('interactive forms', () => {
  it('reply buttons: titles are checked one by one, ids are made for the agent', () => {
    const d = interactive('button', { body: 'Which day suits you?', buttons: ['Monday', 'A title far too long for it'] });
    expect(checkComposer(d, TO).errors).toEqual({ 'interactive.action.buttons[1].reply.title': 'must be at most 20 characters' });
    const ok = interactive('button', { body: 'Which day?', buttons: ['Monday', 'Tuesday'], footer: 'Reply any time' });
    const content = checkComposer(ok, TO).value as { interactive: { action: { buttons: { reply: { id: string } }[] }; footer: unknown } };
    expect(content.interactive.action.buttons.map((b) => b.reply.id)).toEqual(['button-1', 'button-2']);
    expect(content.interactive.footer).toEqual({ text: 'Reply any time' });
    expect(checkComposer(interactive('button', { body: 'x', buttons: [] }), TO).errors).toEqual({ 'interactive.action.buttons': 'must have at least one button' });
  });

  it('a list with several sections and rows; the rows limit across sections is one list-wide rule', () => {
    const sections = [
      { title: 'Mornings', rows: [{ title: '9:00', description: 'Room 1' }, { title: '10:00', description: '' }] },
      { title: 'Afternoons', rows: [{ title: '14:00', description: '' }] },
    ];
    const ok = interactive('list', { body: 'Pick a slot', listButton: 'Slots', sections });
    const value = checkComposer(ok, TO).value as { interactive: { action: { sections: { rows: { id: string; description?: string }[] }[] } } };
    expect(value.interactive.action.sections.map((s) => s.rows.map((r) => r.id))).toEqual([['row-1-1', 'row-1-2'], ['row-2-1']]);
    expect(value.interactive.action.sections[0]!.rows[1]!.description).toBeUndefined();

    const many = Array.from({ length: 3 }, (_, i) => ({ title: `S${i}`, rows: Array.from({ length: 4 }, (_, j) => ({ title: `R${j}`, description: '' })) }));
    const tooMany = interactive('list', { body: 'Pick', listButton: 'Slots', sections: many });
    const errors = checkComposer(tooMany, TO).errors;
    expect(errors['interactive.action.sections']).toBe('must have at most 10 rows in all (has 12)');
    // Not a field of its own: listed apart once a send was tried.
    const shown = new Set(['interactive.body.text']);
    expect(otherErrors({ ...tooMany, showAllErrors: true }, errors, shown)).toEqual(['interactive.action.sections: must have at most 10 rows in all (has 12)']);
    expect(otherErrors(tooMany, errors, shown)).toEqual([]);
  });

  it('cta_url: a header is exactly one kind; a media header carries a link', () => {
    const base = { body: 'Pay your invoice', ctaDisplayText: 'Pay now', ctaUrl: 'https://pay.example.com/42' };
    expect(checkComposer(interactive('cta_url', base), TO).errors).toEqual({});
    const image = interactive('cta_url', { ...base, ctaHeaderType: 'image', ctaHeaderValue: 'https://e.com/h.png' });
    expect(interactiveContent(image.interactive)).toMatchObject({ interactive: { header: { type: 'image', image: { link: 'https://e.com/h.png' } } } });
    expect(checkComposer(interactive('cta_url', { ...base, ctaHeaderType: 'video', ctaHeaderValue: 'not a link' }), TO).errors).toEqual({
      'interactive.header.video.link': 'must be an http:// or https:// address',
    });
    expect(checkComposer(interactive('cta_url', { ...base, ctaUrl: 'pay.example.com' }), TO).errors).toEqual({ 'interactive.action.parameters.url': 'must be an http:// or https:// address' });
  });

  it('flow: by name or by id, never both; a version such as "3"', () => {
    const byName = interactive('flow', { body: 'Book a visit', flowBy: 'name', flowRef: 'booking', flowCta: 'Book' });
    expect(checkComposer(byName, TO).errors).toEqual({});
    expect((interactiveContent(byName.interactive) as { interactive: { action: { parameters: object } } }).interactive.action.parameters).toEqual({
      flow_message_version: '3',
      flow_name: 'booking',
      flow_cta: 'Book',
    });
    const byId = interactive('flow', { body: 'Book', flowBy: 'id', flowRef: '', flowCta: 'Book', flowVersion: 'three' });
    expect(checkComposer(byId, TO).errors).toEqual({
      'interactive.action.parameters.flow_id': 'must not be empty',
      'interactive.action.parameters.flow_message_version': 'must be a version such as "3"',
    });
  });

  it('address_message: a two-letter country in capitals', () => {
    expect(checkComposer(interactive('address_message', { body: 'Where should we deliver?', country: 'IN' }), TO).errors).toEqual({});
    expect(checkComposer(interactive('address_message', { body: 'Where?', country: 'India' }), TO).errors).toEqual({
      'interactive.action.parameters.country': 'must be a two-letter country code in capitals, e.g. "IN"',
    });
  });

  it('call button: sendCallButton\u2019s own input, its rules named by its fields', () => {
    const d = interactive('voice_call', { body: 'Tap to talk to us', callDisplayText: 'Call us', callTtlMinutes: '90' });
    expect(checkComposer(d, TO)).toEqual({ value: { to: TO, bodyText: 'Tap to talk to us', displayText: 'Call us', ttlMinutes: 90 }, errors: {} });
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: '0' }), TO).errors).toEqual({ ttlMinutes: 'must be at least 1 minute' });
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: '50000' }), TO).errors).toEqual({ ttlMinutes: 'must be at most 43200 minutes (30 days)' });
    expect(checkComposer(interactive('voice_call', { callTtlMinutes: 'soon' }), TO).errors).toEqual({ ttlMinutes: 'must be a whole number of minutes' });
    expect(checkComposer(interactive('voice_call', { callDisplayText: 'Call our friendly team' }), TO).errors).toEqual({ displayText: 'must be at most 20 characters' });
    expect(callButtonInput(TO, { ...emptyInteractive('voice_call'), callDisplayText: '', callTtlMinutes: '' })).toEqual({ to: TO });
  });

  it('every variant the form can make is a message the shared schema accepts', () => {
    const filled: Record<Exclude<InteractiveVariant, 'voice_call'>, Partial<InteractiveDraft>> = {
      button: { body: 'b', buttons: ['One'] },
      list: { body: 'b', listButton: 'Open', sections: [{ title: 'S', rows: [{ title: 'R', description: 'D' }] }] },
      cta_url: { body: 'b', ctaHeaderType: 'text', ctaHeaderValue: 'Hi', ctaDisplayText: 'Go', ctaUrl: 'https://e.com' },
      flow: { body: 'b', headerText: 'H', footer: 'F', flowBy: 'id', flowRef: '123', flowCta: 'Go' },
      address_message: { body: 'b', country: 'GB' },
    };
    for (const [variant, patch] of Object.entries(filled)) {
      expect(messageContentSchema.safeParse(interactiveContent({ ...emptyInteractive(variant as InteractiveVariant), ...patch })).success).toBe(true);
    }
  });
});

describe('showing errors', () => {
  it('shows a field\u2019s rule once it was typed in, or after a send was tried; the server\u2019s placement wins', () => {
    const live = { 'text.body': 'must not be empty' };
    const d = draft({});
    expect(visibleError(d, live, 'text.body')).toBeUndefined();
    expect(visibleError({ ...d, touched: { 'text.body': true } }, live, 'text.body')).toBe('must not be empty');
    expect(visibleError({ ...d, showAllErrors: true }, live, 'text.body')).toBe('must not be empty');
    expect(visibleError({ ...d, serverErrors: { 'image.link': 'the link answered HTTP 404' } }, live, 'image.link')).toBe('the link answered HTTP 404');
  });

  it('places the main process\u2019s errors by field, without "content."', () => {
    expect(serverErrorsFrom({ field: 'content.image.link', message: 'content.image.link: the server says the file is text/plain, not an image' })).toEqual({
      'image.link': 'the server says the file is text/plain, not an image',
    });
    expect(serverErrorsFrom({ field: 'to', message: 'Phone number: too short' })).toEqual({ to: 'Phone number: too short' });
    expect(serverErrorsFrom({ message: 'The gateway refused' })).toEqual({});
  });

  it('a sent message clears its words but keeps the tab and the kind of message', () => {
    const d = interactive('list', { body: 'Pick', listButton: 'Slots' });
    const after = afterSend({ ...d, busy: true, error: 'x', touched: { a: true } });
    expect(after).toMatchObject({ tab: 'interactive', busy: false, error: null, touched: {}, interactive: { variant: 'list', body: '', listButton: '' } });
    expect(afterSend(draft({ text: 'Hi' })).text).toBe('');
  });

  it('keeps what the agent typed while the send was under way', () => {
    const sent = draft({ text: 'First', busy: true });
    expect(afterSendOf(sent, sent)).toMatchObject({ text: '', busy: false });
    expect(afterSendOf({ ...sent, text: 'First, and then some' }, sent)).toMatchObject({ text: 'First, and then some', busy: false, error: null });
  });
});

describe('templates', () => {
  it('prefills sample values, leaves placeholders blank, and keeps what the agent typed', () => {
    const paste = JSON.stringify({
      to: '<USER_PHONE_NUMBER>',
      type: 'template',
      template: { name: 'reminder', language: { code: 'en' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '{{1}}' }, { type: 'text', text: 'Tuesday 10:00' }] }] },
    });
    const parsed = parseTemplatePayload(paste);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const [first, second] = parsed.value.fields;
    expect(templateValuesFor(parsed.value)).toEqual({ [first!.path]: '', [second!.path]: 'Tuesday 10:00' });
    expect(templateValuesFor(parsed.value, { [first!.path]: 'Ada' })).toEqual({ [first!.path]: 'Ada', [second!.path]: 'Tuesday 10:00' });
  });
});
