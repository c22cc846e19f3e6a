// Every rule of gateway-spec.md 2.1–2.4 and 4.1 for the replymessage body, each with a valid and an
// invalid example, the invalid ones refused with the field's path and the rule.
import { describe, expect, test } from 'vitest';
import {
  buildCallPermissionRequest,
  buildFreeFormMessage,
  buildVoiceCallButtonMessage,
  describeMessage,
  formatBytes,
  MB,
  MEDIA_TABLE,
  mediaExtensions,
  mediaMimeTypes,
  messageSentSchema,
  parseFreeFormMessage,
  type FreeFormMessage,
} from '../../../shared/messages';
import { decodeVoiceCallPayload } from '../../../shared/voice-call-payload';

const TO = '447700900123';
const envelope = { messaging_product: 'chatapp', recipient_type: 'individual', to: TO } as const;

/** Deep copy with one change at a dotted path; `undefined` removes the member. */
function withChange(base: unknown, path: string, value: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(base)) as Record<string, unknown>;
  const parts = path.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
  let node = copy as Record<string | number, unknown>;
  for (const part of parts.slice(0, -1)) node = node[part] as Record<string | number, unknown>;
  const last = parts[parts.length - 1]!;
  if (value === undefined) delete node[last];
  else node[last] = value;
  return copy;
}

/** `a.0.b` (how the tests write a path) → `a[0].b` (how shared/validation.ts names a field). */
const bracketed = (path: string) => path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');

function refused(body: unknown, product = 'chatapp') {
  const result = parseFreeFormMessage(body, product);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('accepted');
  expect(result.error.code).toBe('invalid_input');
  return result.error;
}

function accepted(body: unknown): FreeFormMessage {
  const result = parseFreeFormMessage(body);
  if (!result.ok) throw new Error(`refused: ${result.error.message}`);
  return result.value;
}

const text = { ...envelope, type: 'text', text: { body: 'Your payment link: https://pay.example.com/x' } };
const image = { ...envelope, type: 'image', image: { link: 'https://cdn.example.com/photo.png', caption: 'The photo' } };
const audio = { ...envelope, type: 'audio', audio: { id: '1234567890' } };
const video = { ...envelope, type: 'video', video: { link: 'https://cdn.example.com/clip.mp4', caption: 'Watch' } };
const documentMsg = { ...envelope, type: 'document', document: { link: 'https://cdn.example.com/invoice.pdf', caption: 'Invoice', filename: 'invoice-42.pdf' } };

const button = {
  ...envelope,
  type: 'interactive',
  interactive: {
    type: 'button',
    header: { type: 'text', text: 'Your order' },
    body: { text: 'Shall we deliver tomorrow?' },
    footer: { text: 'Reply with a button' },
    action: {
      buttons: [
        { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
        { type: 'reply', reply: { id: 'no', title: 'No' } },
      ],
    },
  },
};
const list = {
  ...envelope,
  type: 'interactive',
  interactive: {
    type: 'list',
    header: { type: 'text', text: 'Our plans' },
    body: { text: 'Pick a plan' },
    footer: { text: 'Prices include VAT' },
    action: {
      button: 'See plans',
      sections: [
        { title: 'Mobile', rows: [{ id: 'm1', title: 'Mobile S', description: '5 GB' }, { id: 'm2', title: 'Mobile L', description: '50 GB' }] },
        { title: 'Home', rows: [{ id: 'h1', title: 'Fibre', description: '1 Gbit/s' }] },
      ],
    },
  },
};
const ctaUrl = {
  ...envelope,
  type: 'interactive',
  interactive: {
    type: 'cta_url',
    header: { type: 'image', image: { link: 'https://cdn.example.com/banner.png' } },
    body: { text: 'Pay your invoice online' },
    action: { name: 'cta_url', parameters: { display_text: 'Pay now', url: 'https://pay.example.com/inv/42' } },
  },
};
const flow = {
  ...envelope,
  type: 'interactive',
  interactive: {
    type: 'flow',
    header: { type: 'text', text: 'Feedback' },
    body: { text: 'Tell us how we did' },
    footer: { text: 'Takes a minute' },
    action: { name: 'flow', parameters: { flow_message_version: '3', flow_name: 'feedback_form', flow_cta: 'Open form' } },
  },
};
const address = {
  ...envelope,
  type: 'interactive',
  interactive: { type: 'address_message', body: { text: 'Where shall we deliver?' }, action: { name: 'address_message', parameters: { country: 'IN' } } },
};
const voiceCall = {
  ...envelope,
  type: 'interactive',
  interactive: {
    type: 'voice_call',
    body: { text: 'Tap to call us back' },
    action: { name: 'voice_call', parameters: { display_text: 'Call us', ttl_minutes: 60, payload: '{"v":1,"agentId":"a1","contact":"447700900123"}' } },
  },
};
const permission = {
  ...envelope,
  type: 'interactive',
  interactive: { type: 'call_permission_request', body: { text: 'May we call you about your order?' }, action: { name: 'call_permission_request' } },
};

describe('valid messages of every type', () => {
  test.each([
    ['text', text],
    ['image by link with caption', image],
    ['audio by id', audio],
    ['video', video],
    ['document with filename', documentMsg],
    ['reply buttons', button],
    ['list with several sections and rows', list],
    ['cta_url with an image header', ctaUrl],
    ['flow by name', flow],
    ['address_message', address],
    ['voice_call', voiceCall],
    ['call_permission_request', permission],
  ])('%s is accepted as it is', (_name, body) => {
    expect(accepted(body)).toEqual(body);
  });

  test('optional members may be left out', () => {
    accepted(withChange(button, 'interactive.header', undefined));
    accepted(withChange(withChange(button, 'interactive.footer', undefined), 'interactive.header', undefined));
    accepted(withChange(list, 'interactive.header', undefined));
    accepted(withChange(list, 'interactive.action.sections.0.rows.0.description', undefined));
    accepted(withChange(ctaUrl, 'interactive.header', undefined));
    accepted(withChange(ctaUrl, 'interactive.footer', { text: 'Secure payment' }));
    accepted(withChange(image, 'image.caption', undefined));
    accepted(withChange(documentMsg, 'document.filename', undefined));
    accepted(withChange(text, 'text.preview_url', true));
  });
});

describe('the envelope (gateway-spec.md 2.1)', () => {
  test.each([
    ['messaging_product', 'whatsapp', 'must be "chatapp"'],
    ['messaging_product', undefined, 'must be "chatapp"'],
    ['recipient_type', 'group', 'must be "individual"'],
    ['recipient_type', undefined, 'must be "individual"'],
    ['to', '+447700900123', 'digits only'],
    ['to', '44 7700 900123', 'digits only'],
    ['to', '0447700900123', 'digits only'],
    ['to', '12345', 'digits only'],
    ['to', undefined, 'is required'],
    ['to', 447700900123, 'must be a string'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(text, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });

  test('the product word is the account\u2019s setting', () => {
    const acme = { ...text, messaging_product: 'acme' };
    expect(parseFreeFormMessage(acme, 'acme').ok).toBe(true);
    expect(refused(acme).field).toBe('messaging_product');
  });

  test('an unknown or missing type is refused, templates named as going elsewhere', () => {
    const unknown = refused({ ...envelope, type: 'sticker', sticker: { id: '1' } });
    expect(unknown.field).toBe('type');
    expect(unknown.message).toContain('must be one of text, image, audio, video, document, interactive');
    const template = refused({ ...envelope, type: 'template', template: { name: 'x', language: { code: 'en' } } });
    expect(template.field).toBe('type');
    expect(template.message).toContain('sendtemplate');
    expect(refused({ ...envelope, text: { body: 'x' } }).field).toBe('type');
  });

  test('the content must be the member named by type, and nothing else', () => {
    const missing = refused({ ...envelope, type: 'text' });
    expect(missing.field).toBe('text');
    expect(missing.message).toContain('is required');
    const extra = refused({ ...text, image: { link: 'https://cdn.example.com/a.png' } });
    expect(extra.field).toBe('(root)');
    expect(extra.message).toContain('"image"');
  });

  test('anything that is not an object is refused, never thrown', () => {
    for (const body of [null, undefined, 'text', 42, [], true]) expect(parseFreeFormMessage(body).ok).toBe(false);
  });
});

describe('text (gateway-spec.md 2.2, 4.1 rule 1)', () => {
  test.each([
    ['text.body', undefined, 'is required'],
    ['text.body', '', 'must not be empty'],
    ['text.body', '   ', 'must not be empty'],
    ['text.body', 42, 'must be a string'],
    ['text.body', 'x'.repeat(4097), 'at most 4096'],
    ['text.preview_url', 'yes', 'true or false'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(text, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });

  test('4096 characters are accepted', () => {
    accepted(withChange(text, 'text.body', 'x'.repeat(4096)));
  });
});

describe('media (gateway-spec.md 2.3)', () => {
  test.each(['image', 'audio', 'video', 'document'])('%s: exactly one of id and link', (type) => {
    const base = { ...envelope, type, [type]: { id: 'media-1' } };
    accepted(base);
    accepted({ ...envelope, type, [type]: { link: `https://cdn.example.com/file` } });
    const both = refused({ ...envelope, type, [type]: { id: 'media-1', link: 'https://cdn.example.com/file' } });
    expect(both.field).toBe(`${type}.link`);
    expect(both.message).toContain('exactly one of id and link');
    const neither = refused({ ...envelope, type, [type]: {} });
    expect(neither.field).toBe(type);
    expect(neither.message).toContain('needs exactly one of id and link');
  });

  test.each(['image', 'video', 'document'])('%s takes a caption', (type) => {
    accepted({ ...envelope, type, [type]: { id: 'm', caption: 'Look' } });
    const long = refused({ ...envelope, type, [type]: { id: 'm', caption: 'x'.repeat(1025) } });
    expect(long.field).toBe(`${type}.caption`);
  });

  test('audio takes no caption', () => {
    const error = refused({ ...envelope, type: 'audio', audio: { id: 'm', caption: 'Listen' } });
    expect(error.field).toBe('audio.caption');
    expect(error.message).toContain('only image, video and document take a caption');
  });

  test.each(['image', 'audio', 'video'])('%s takes no filename; only document does', (type) => {
    const error = refused({ ...envelope, type, [type]: { id: 'm', filename: 'a.bin' } });
    expect(error.field).toBe(`${type}.filename`);
    expect(error.message).toContain('only document takes a filename');
  });

  test('a link must be an http or https address; an id must not be empty', () => {
    for (const link of ['ftp://cdn.example.com/a.png', 'file:///etc/passwd', 'not a url', 'javascript:alert(1)', 'https://']) {
      const error = refused(withChange(image, 'image.link', link));
      expect(error.field).toBe('image.link');
      expect(error.message).toContain('http:// or https://');
    }
    expect(refused({ ...envelope, type: 'audio', audio: { id: '' } }).field).toBe('audio.id');
  });

  test('a member the media object does not have is named', () => {
    const error = refused(withChange(documentMsg, 'document.fillename', 'x.pdf'));
    expect(error.field).toBe('document');
    expect(error.message).toContain('"fillename"');
  });

  test('the media table spells out every type, extension, MIME type and limit', () => {
    expect(MEDIA_TABLE.image.maxBytes).toBe(5 * MB);
    expect(MEDIA_TABLE.video.maxBytes).toBe(16 * MB);
    expect(MEDIA_TABLE.audio.maxBytes).toBe(10 * MB);
    expect(MEDIA_TABLE.document.maxBytes).toBe(25 * MB);
    expect(mediaMimeTypes('image')).toEqual(['image/jpeg', 'image/png']);
    expect(mediaExtensions('video')).toEqual(['.3gp', '.mp4']);
    expect(mediaMimeTypes('audio')).toEqual(['audio/aac', 'audio/amr', 'audio/mpeg', 'audio/mp4', 'audio/ogg']);
    expect(mediaExtensions('audio')).toEqual(['.aac', '.amr', '.mp3', '.m4a', '.ogg']);
    expect(mediaExtensions('document')).toEqual(['.txt', '.xls', '.xlsx', '.doc', '.docx', '.ppt', '.pptx', '.pdf']);
    expect(mediaMimeTypes('document')).toEqual([
      'text/plain',
      'application/vnd.ms-excel',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      'application/msword',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
      'application/vnd.ms-powerpoint',
      'application/vnd.openxmlformats-officedocument.presentationml.presentation',
      'application/pdf',
    ]);
    expect(formatBytes(5 * MB)).toBe('5 MB');
    expect(formatBytes(Math.round(2.4 * MB))).toBe('2.4 MB');
    expect(formatBytes(2048)).toBe('2 KB');
  });
});

describe('interactive: the variant (gateway-spec.md 2.4)', () => {
  test('an unknown or missing interactive.type is refused', () => {
    const unknown = refused(withChange(button, 'interactive.type', 'carousel'));
    expect(unknown.field).toBe('interactive.type');
    expect(unknown.message).toContain('must be one of button, list, cta_url, flow, address_message, voice_call');
    expect(refused(withChange(button, 'interactive.type', undefined)).field).toBe('interactive.type');
    expect(refused({ ...envelope, type: 'interactive' }).field).toBe('interactive');
  });

  test.each([
    ['button', button],
    ['list', list],
    ['cta_url', ctaUrl],
    ['flow', flow],
    ['address_message', address],
    ['voice_call', voiceCall],
  ])('%s needs body.text', (_name, body) => {
    expect(refused(withChange(body, 'interactive.body', undefined)).field).toBe('interactive.body');
    const empty = refused(withChange(body, 'interactive.body.text', ''));
    expect(empty.field).toBe('interactive.body.text');
    expect(empty.message).toContain('must not be empty');
  });
});

describe('interactive button', () => {
  test.each([
    ['interactive.action.buttons', [], 'at least one button'],
    ['interactive.action.buttons', undefined, 'is required'],
    ['interactive.action.buttons.0.type', 'url', 'must be "reply"'],
    ['interactive.action.buttons.0.reply.id', '', 'must not be empty'],
    ['interactive.action.buttons.0.reply.title', 'A title that is far too long', 'at most 20'],
    ['interactive.action.buttons.1.reply.id', 'yes', 'must be unique'],
    ['interactive.footer.text', '', 'must not be empty'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(button, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });

  test('at most three buttons', () => {
    const four = [1, 2, 3, 4].map((n) => ({ type: 'reply', reply: { id: `b${n}`, title: `B${n}` } }));
    accepted(withChange(button, 'interactive.action.buttons', four.slice(0, 3)));
    const error = refused(withChange(button, 'interactive.action.buttons', four));
    expect(error.field).toBe('interactive.action.buttons');
    expect(error.message).toContain('at most 3');
  });

  test('a header may be media by id or link, exactly one', () => {
    accepted(withChange(button, 'interactive.header', { type: 'image', image: { id: '99' } }));
    accepted(withChange(button, 'interactive.header', { type: 'document', document: { link: 'https://cdn.example.com/a.pdf' } }));
    const both = refused(withChange(button, 'interactive.header', { type: 'video', video: { id: '1', link: 'https://cdn.example.com/v.mp4' } }));
    expect(both.field).toBe('interactive.header.video.link');
  });
});

describe('interactive list', () => {
  test.each([
    ['interactive.header.type', 'image', 'must be "text"'],
    ['interactive.action.button', '', 'must not be empty'],
    ['interactive.action.button', undefined, 'is required'],
    ['interactive.action.sections', [], 'at least one section'],
    ['interactive.action.sections.0.title', undefined, 'is required'],
    ['interactive.action.sections.1.rows', [], 'at least one row'],
    ['interactive.action.sections.0.rows.1.id', 42, 'must be a string'],
    ['interactive.action.sections.0.rows.0.title', '', 'must not be empty'],
    ['interactive.action.sections.0.rows.0.description', 5, 'must be a string'],
    ['interactive.action.sections.0.rows.0.description', 'x'.repeat(73), 'at most 72'],
    ['interactive.action.sections.1.rows.0.id', 'm1', 'must be unique'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(list, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });

  test('at most ten rows in all', () => {
    const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${from + i}`, title: `Row ${from + i}`, description: '' }));
    accepted(withChange(list, 'interactive.action.sections', [{ title: 'A', rows: rows(0, 5) }, { title: 'B', rows: rows(5, 5) }]));
    const error = refused(withChange(list, 'interactive.action.sections', [{ title: 'A', rows: rows(0, 6) }, { title: 'B', rows: rows(6, 5) }]));
    expect(error.field).toBe('interactive.action.sections');
    expect(error.message).toContain('at most 10 rows');
  });
});

describe('interactive cta_url', () => {
  test.each([
    [{ type: 'document', document: { link: 'https://cdn.example.com/a.pdf' } }],
    [{ type: 'image', image: { link: 'https://cdn.example.com/a.png' } }],
    [{ type: 'text', text: 'Hello' }],
    [{ type: 'video', video: { link: 'https://cdn.example.com/a.mp4' } }],
  ])('header %j is one of the four', (header) => {
    accepted(withChange(ctaUrl, 'interactive.header', header));
  });

  test.each([
    [{ type: 'image', image: { link: 'https://cdn.example.com/a.png' }, text: 'and text' }, 'interactive.header', '"text"'],
    [{ type: 'location' }, 'interactive.header.type', 'must be one of document, image, text, video'],
    [{ type: 'image', image: { id: '12' } }, 'interactive.header.image.link', '"id"'],
    [{ type: 'image', document: { link: 'https://cdn.example.com/a.pdf' } }, 'interactive.header.image', '"document"'],
    [{ type: 'text' }, 'interactive.header.text', 'is required'],
  ])('header %j is refused', (header, field, rule) => {
    const error = refused(withChange(ctaUrl, 'interactive.header', header));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });

  test.each([
    ['interactive.action.name', 'url', 'must be "cta_url"'],
    ['interactive.action.parameters.display_text', undefined, 'is required'],
    ['interactive.action.parameters.display_text', 'A label much too long to fit', 'at most 20'],
    ['interactive.action.parameters.url', 'pay.example.com', 'http:// or https://'],
    ['interactive.action.parameters.url', undefined, 'is required'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(ctaUrl, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });
});

describe('interactive flow', () => {
  test('flow_id instead of flow_name', () => {
    accepted(withChange(withChange(flow, 'interactive.action.parameters.flow_name', undefined), 'interactive.action.parameters.flow_id', '1234567890'));
  });

  test('exactly one of flow_name and flow_id', () => {
    const both = refused(withChange(flow, 'interactive.action.parameters.flow_id', '123'));
    expect(both.field).toBe('interactive.action.parameters.flow_id');
    expect(both.message).toContain('exactly one of flow_name and flow_id');
    const neither = refused(withChange(flow, 'interactive.action.parameters.flow_name', undefined));
    expect(neither.field).toBe('interactive.action.parameters');
    expect(neither.message).toContain('needs exactly one of flow_name and flow_id');
  });

  test.each([
    ['interactive.action.parameters.flow_message_version', 3, 'must be a string'],
    ['interactive.action.parameters.flow_message_version', undefined, 'is required'],
    ['interactive.action.parameters.flow_cta', undefined, 'is required'],
    ['interactive.action.parameters.flow_cta', 'An open-form label too long', 'at most 20'],
    ['interactive.action.parameters.flow_message_version', 'three', 'version such as "3"'],
    ['interactive.action.name', 'form', 'must be "flow"'],
    ['interactive.header.type', 'image', 'must be "text"'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(flow, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });
});

describe('interactive address_message', () => {
  test.each([
    ['interactive.action.parameters.country', undefined, 'is required'],
    ['interactive.action.parameters.country', 'india', 'two-letter country code'],
    ['interactive.action.name', 'address', 'must be "address_message"'],
    ['interactive.footer', { text: 'x' }, '"footer"'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(address, field, value));
    expect(error.field).toBe(field === 'interactive.footer' ? 'interactive' : field);
    expect(error.message).toContain(rule);
  });
});

describe('interactive voice_call (protocol.md limits)', () => {
  const p = 'interactive.action.parameters';
  test('the limits themselves are accepted', () => {
    accepted(withChange(voiceCall, `${p}.display_text`, 'x'.repeat(20)));
    accepted(withChange(voiceCall, `${p}.ttl_minutes`, 1));
    accepted(withChange(voiceCall, `${p}.ttl_minutes`, 43_200));
    accepted(withChange(voiceCall, `${p}.payload`, 'p'.repeat(512)));
  });

  test.each([
    [`${p}.display_text`, 'x'.repeat(21), 'at most 20 characters'],
    [`${p}.display_text`, '', 'must not be empty'],
    [`${p}.ttl_minutes`, 0, 'at least 1'],
    [`${p}.ttl_minutes`, 43_201, 'at most 43200'],
    [`${p}.ttl_minutes`, 1.5, 'whole number'],
    [`${p}.ttl_minutes`, '60', 'must be a number'],
    [`${p}.ttl_minutes`, undefined, 'is required'],
    [`${p}.payload`, 'p'.repeat(513), 'at most 512 characters'],
    [`${p}.payload`, undefined, 'is required'],
    ['interactive.action.name', 'call', 'must be "voice_call"'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refused(withChange(voiceCall, field, value));
    expect(error.field).toBe(bracketed(field));
    expect(error.message).toContain(rule);
  });
});

describe('the voice_call payload routes the call back to the agent', () => {
  // The payload itself (encode, decode, limits): test/unit/messages/voice-call-payload.test.ts.
  test('the one-click call button is a valid voice_call message', () => {
    const message = buildVoiceCallButtonMessage({ product: 'chatapp', to: TO, agentId: 'agent-7' });
    expect(message.ok).toBe(true);
    if (!message.ok) return;
    expect(message.value).toMatchObject({ ...envelope, type: 'interactive', interactive: { type: 'voice_call', action: { name: 'voice_call' } } });
    const m = message.value as Extract<FreeFormMessage, { type: 'interactive' }>;
    if (m.interactive.type !== 'voice_call') throw new Error('not a voice_call');
    expect(decodeVoiceCallPayload(m.interactive.action.parameters.payload)).toEqual({ kind: 'ours', payload: { v: 1, agentId: 'agent-7', contact: TO } });
    const tooLong = buildVoiceCallButtonMessage({ product: 'chatapp', to: TO, agentId: 'agent-7', displayText: 'A display text over twenty' });
    expect(tooLong.ok).toBe(false);
    if (!tooLong.ok) expect(tooLong.error.field).toBe('interactive.action.parameters.display_text');
  });

  test('the call-permission request and composed content get their envelope', () => {
    expect(buildCallPermissionRequest('chatapp', TO, 'May we call you?').ok).toBe(true);
    const bad = buildFreeFormMessage('chatapp', '+44 7700 900123', { type: 'text', text: { body: 'hi' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.field).toBe('to');
  });
});

describe('the success answer (gateway-spec.md 2.6)', () => {
  test('message id and wa_id', () => {
    const answer = { messaging_product: 'chatapp', contacts: [{ input: TO, wa_id: TO }], messages: [{ id: 'wamid.HBgL' }] };
    expect(messageSentSchema.parse(answer)).toEqual(answer);
    expect(messageSentSchema.safeParse({ ...answer, messages: [] }).success).toBe(false);
    expect(messageSentSchema.safeParse({ ...answer, contacts: undefined }).success).toBe(false);
    expect(messageSentSchema.safeParse({ ...answer, messages: [{ id: '' }] }).success).toBe(false);
  });
});

describe('one line per message for a timeline', () => {
  test.each([
    [text, 'Your payment link: https://pay.example.com/x'],
    [documentMsg, 'Document: invoice-42.pdf — Invoice'],
    [image, 'Image: photo.png — The photo'],
    [voiceCall, 'Call button: Call us'],
    [button, 'Buttons: Shall we deliver tomorrow? [Yes | No]'],
  ])('%#', (body, line) => {
    expect(describeMessage(accepted(body))).toBe(line);
  });
});
