// Templates (gateway-spec.md 2.5a, 4.3): the sendtemplate body's rules, and the agent's paste of
// the console's "API Payload" — finding the recipient and the variables, filling them, refusing
// what is broken with the field and the rule.
import { describe, expect, test } from 'vitest';
import { describeTemplate, fillTemplate, isPlaceholder, parseTemplateMessage, parseTemplatePayload, type TemplateDraft } from '../../../shared/templates';

const bracketed = (path: string) => path.replace(/\.(\d+)(?=\.|$)/g, '[$1]');

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

const valid = {
  messaging_product: 'chatapp',
  recipient_type: 'individual',
  to: '12025550101',
  type: 'template',
  template: {
    name: 'order_update',
    language: { code: 'en_US' },
    components: [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/parcel.png' } }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Ada' },
          { type: 'currency', currency: { fallback_value: '$12.50', code: 'USD', amount_1000: 12500 } },
          { type: 'date_time', date_time: { fallback_value: 'May 4, 2026' } },
        ],
      },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'track/ABC123' }] },
      { type: 'button', sub_type: 'quick_reply', index: 1, parameters: [{ type: 'payload', payload: 'STOP' }] },
    ],
  },
};

function refusedTemplate(body: unknown) {
  const result = parseTemplateMessage(body);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('accepted');
  expect(result.error.code).toBe('invalid_input');
  return result.error;
}

describe('the template message (gateway-spec.md 2.5a)', () => {
  test('a full template with header, body and buttons is accepted as it is', () => {
    expect(parseTemplateMessage(valid)).toEqual({ ok: true, value: valid });
  });

  test('a template without variables needs no components', () => {
    expect(parseTemplateMessage(withChange(valid, 'template.components', undefined)).ok).toBe(true);
  });

  test('component types a console may produce beyond these pass with their shape intact', () => {
    const carousel = withChange(valid, 'template.components.4', { type: 'carousel', cards: [{ card_index: 0, components: [] }] });
    expect(parseTemplateMessage(carousel).ok).toBe(true);
    const location = withChange(valid, 'template.components.0.parameters.0', { type: 'location', location: { latitude: '1', longitude: '2' } });
    expect(parseTemplateMessage(location).ok).toBe(true);
  });

  test.each([
    ['type', 'text', 'must be "template"'],
    ['to', '+12025550101', 'digits only'],
    ['messaging_product', 'whatsapp', 'must be "chatapp"'],
    ['template', undefined, 'is required'],
    ['template.name', undefined, 'is required'],
    ['template.name', 'Order Update', 'lower-case letters, digits and underscores'],
    ['template.language', undefined, 'is required'],
    ['template.language.code', 'english', 'language code'],
    ['template.language.policy', 'fallback', 'must be "deterministic"'],
    ['template.components', {}, 'must be a list'],
    ['template.components.1.type', 42, 'must be a string'],
    ['template.components.1.parameters', 'Ada', 'must be a list'],
    ['template.components.1.parameters.0.text', '', 'must not be empty'],
    ['template.components.1.parameters.0.text', '{{1}}', 'still a placeholder'],
    ['template.components.1.parameters.0.text', '<VALUE>', 'still a placeholder'],
    ['template.components.1.parameters.0.type', undefined, 'is required'],
    ['template.components.1.parameters.0.extra', 'x', '"extra"'],
    ['template.components.1.parameters.1.currency.code', 'dollars', 'ISO 4217'],
    ['template.components.1.parameters.1.currency.amount_1000', 12.5, 'whole number'],
    ['template.components.1.parameters.2.date_time.fallback_value', undefined, 'is required'],
    ['template.components.0.parameters.0.image', {}, 'exactly one of id and link'],
    ['template.components.0.parameters.0.image.link', 'cdn.example.com/parcel.png', 'http:// or https://'],
    ['template.components.2.sub_type', undefined, 'is required'],
    ['template.components.2.index', 12, 'position, 0 to 9'],
    ['template.components.3.parameters.0.payload', '', 'must not be empty'],
  ])('%s = %j is refused', (field, value, rule) => {
    const error = refusedTemplate(withChange(valid, field, value));
    const expected = field.endsWith('.extra') ? field.slice(0, -'.extra'.length) : field;
    expect(error.field).toBe(bracketed(expected));
    expect(error.message).toContain(rule);
  });
});

// ---------------------------------------------------------------------------------------------
// Payloads as a template list's "API Payload" produces them.

const CONSOLE_BRACES = `{
  "messaging_product": "chatapp",
  "recipient_type": "individual",
  "to": "<USER_PHONE_NUMBER>",
  "type": "template",
  "template": {
    "name": "order_update",
    "language": {
      "code": "en_US"
    },
    "components": [
      {
        "type": "body",
        "parameters": [
          { "type": "text", "text": "{{1}}" },
          { "type": "text", "text": "{{2}}" },
          { "type": "text", "text": "{{3}}" }
        ]
      }
    ]
  }
}`;

const CONSOLE_VALUE = JSON.stringify({
  messaging_product: 'whatsapp',
  recipient_type: 'individual',
  to: '<USER_PHONE_NUMBER>',
  type: 'template',
  template: {
    name: 'missed_call_followup',
    language: { code: 'en' },
    components: [{ type: 'body', parameters: [{ type: 'text', text: '<VALUE>' }, { type: 'text', text: '' }] }],
  },
});

const CONSOLE_SAMPLES = JSON.stringify(
  {
    messaging_product: 'chatapp',
    recipient_type: 'individual',
    to: '919876543210',
    type: 'template',
    template: {
      name: 'appointment_reminder',
      language: { code: 'en_GB' },
      components: [
        { type: 'header', parameters: [{ type: 'image', image: { link: '<IMAGE_URL>' } }] },
        { type: 'body', parameters: [{ type: 'text', parameter_name: 'patient', text: 'Ada' }, { type: 'text', parameter_name: 'slot', text: 'Tuesday 10:00' }] },
        { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: '<URL_SUFFIX>' }] },
        { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: '<PAYLOAD>' }] },
      ],
    },
  },
  null,
  4,
);

function draftOf(pasted: string): TemplateDraft {
  const result = parseTemplatePayload(pasted);
  if (!result.ok) throw new Error(`refused: ${result.error.message}`);
  return result.value;
}

function pasteRefused(pasted: string) {
  const result = parseTemplatePayload(pasted);
  expect(result.ok).toBe(false);
  if (result.ok) throw new Error('accepted');
  expect(result.error.code).toBe('invalid_input');
  return result.error;
}

describe('pasting the console\u2019s API Payload', () => {
  test('"{{n}}" placeholders: the name, language, a placeholder recipient and one field per variable', () => {
    const draft = draftOf(CONSOLE_BRACES);
    expect(draft.name).toBe('order_update');
    expect(draft.languageCode).toBe('en_US');
    expect(draft.recipient).toEqual({ raw: '<USER_PHONE_NUMBER>', placeholder: true });
    expect(draft.pastedProduct).toBe('chatapp');
    expect(draft.fields).toEqual([
      { path: 'template.components[0].parameters[0].text', label: 'Body {{1}}', sample: '{{1}}', placeholder: true, kind: 'text' },
      { path: 'template.components[0].parameters[1].text', label: 'Body {{2}}', sample: '{{2}}', placeholder: true, kind: 'text' },
      { path: 'template.components[0].parameters[2].text', label: 'Body {{3}}', sample: '{{3}}', placeholder: true, kind: 'text' },
    ]);
  });

  test('"<VALUE>" and empty placeholders, and the brand\u2019s product word', () => {
    const draft = draftOf(CONSOLE_VALUE);
    expect(draft.pastedProduct).toBe('whatsapp');
    expect(draft.fields.map((f) => [f.label, f.sample, f.placeholder])).toEqual([
      ['Body variable 1', '<VALUE>', true],
      ['Body variable 2', '', true],
    ]);
  });

  test('sample values, a sample number, named parameters, a header image and buttons', () => {
    const draft = draftOf(CONSOLE_SAMPLES);
    expect(draft.recipient).toEqual({ raw: '919876543210', placeholder: false, number: '919876543210' });
    expect(draft.fields).toEqual([
      { path: 'template.components[0].parameters[0].image.link', label: 'Header image link', sample: '<IMAGE_URL>', placeholder: true, kind: 'link' },
      { path: 'template.components[1].parameters[0].text', label: 'Body {{patient}}', sample: 'Ada', placeholder: false, kind: 'text' },
      { path: 'template.components[1].parameters[1].text', label: 'Body {{slot}}', sample: 'Tuesday 10:00', placeholder: false, kind: 'text' },
      { path: 'template.components[2].parameters[0].text', label: 'Button 1 URL suffix', sample: '<URL_SUFFIX>', placeholder: true, kind: 'text' },
      { path: 'template.components[3].parameters[0].payload', label: 'Button 2 payload', sample: '<PAYLOAD>', placeholder: true, kind: 'payload' },
    ]);
  });

  test('a template without variables has no fields', () => {
    const draft = draftOf('{"messaging_product":"chatapp","to":"<USER_PHONE_NUMBER>","type":"template","template":{"name":"welcome_back","language":{"code":"en"}}}');
    expect(draft.fields).toEqual([]);
  });

  test('the template object alone, or inside a curl command, is found too', () => {
    const inner = JSON.stringify(JSON.parse(CONSOLE_BRACES).template);
    expect(draftOf(inner).fields).toHaveLength(3);
    expect(draftOf(inner).recipient).toEqual({ placeholder: true });
    const curl = `curl -X POST 'https://gw.example.com/restapi/v1/chatapp/sendtemplate' \\\n  -H 'API-KEY: <API_KEY>' -H 'Content-Type: application/json' \\\n  -d '${CONSOLE_BRACES}'`;
    expect(draftOf(curl).name).toBe('order_update');
    expect(draftOf(`\uFEFF\n\n${CONSOLE_VALUE}\n`).name).toBe('missed_call_followup');
  });

  test('invalid JSON is located by line and column', () => {
    const broken = CONSOLE_BRACES.replace('"code": "en_US"', '"code": "en_US",');
    const error = pasteRefused(broken);
    expect(error.field).toBe('payload');
    expect(error.message).toMatch(/not valid JSON at line 10, column 5/);
    expect(error.message).toContain('a comma stands before a closing bracket');
  });

  test('typographic quotes are named as the likely cause', () => {
    const error = pasteRefused('{\u201Cname\u201D: \u201Corder_update\u201D}');
    expect(error.message).toContain('line 1, column 2');
    expect(error.message).toContain('typographic quotes');
  });

  test.each([
    ['', 'payload', 'Paste the template'],
    ['   ', 'payload', 'Paste the template'],
    ['[1, 2]', 'payload', 'must be an object'],
    ['"order_update"', 'payload', 'must be an object'],
    ['{"messaging_product":"chatapp","to":"1","type":"text","text":{"body":"hi"}}', 'template', 'no "template" object'],
    ['{"type":"text","template":{"name":"a","language":{"code":"en"}}}', 'type', 'not a template'],
    ['{"template":{"language":{"code":"en"}}}', 'template.name', 'is required'],
    ['{"template":{"name":"","language":{"code":"en"}}}', 'template.name', 'template name'],
    ['{"template":{"name":"order_update"}}', 'template.language', 'is required'],
    ['{"template":{"name":"order_update","language":{"code":"??"}}}', 'template.language.code', 'language code'],
    ['{"template":{"name":"order_update","language":{"code":"en"},"components":{}}}', 'template.components', 'must be a list'],
    ['{"template":{"name":"order_update","language":{"code":"en"},"components":[{"parameters":[]}]}}', 'template.components[0].type', 'is required'],
    ['{"template":{"name":"order_update","language":{"code":"en"},"components":[{"type":"body","parameters":[1]}]}}', 'template.components[0].parameters[0]', 'must be an object'],
    ['{"template":"order_update"}', 'template', 'must be an object'],
  ])('%j is refused naming %s', (pasted, field, rule) => {
    const error = pasteRefused(pasted);
    expect(error.field).toBe(field);
    expect(error.message).toContain(rule);
  });

  test('placeholders are told apart from sample values', () => {
    for (const p of ['', ' ', '{{1}}', '{{ customer_name }}', '<VALUE>', '<USER_PHONE_NUMBER>', '[name]']) expect(isPlaceholder(p)).toBe(true);
    for (const v of ['Ada', '12.50', 'Tuesday 10:00', '<3 you', '{{1}} and more']) expect(isPlaceholder(v)).toBe(false);
  });
});

describe('filling a template', () => {
  test('the final body: the number normalised, every variable in place, the account\u2019s product word', () => {
    const draft = draftOf(CONSOLE_VALUE);
    const [first, second] = draft.fields;
    const result = fillTemplate(draft, { to: '+1 (202) 555-0101', values: { [first!.path]: 'Ada', [second!.path]: 'your invoice' }, product: 'chatapp' });
    expect(result).toEqual({
      ok: true,
      value: {
        messaging_product: 'chatapp',
        recipient_type: 'individual',
        to: '12025550101',
        type: 'template',
        template: {
          name: 'missed_call_followup',
          language: { code: 'en' },
          components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }, { type: 'text', text: 'your invoice' }] }],
        },
      },
    });
    expect(describeTemplate(result.ok ? result.value : (undefined as never))).toBe('Template missed_call_followup (en)');
  });

  test('header link, named parameters, URL suffix and payload are filled at their paths', () => {
    const draft = draftOf(CONSOLE_SAMPLES);
    const values = Object.fromEntries(
      draft.fields.map((f) => [f.path, f.kind === 'link' ? 'https://cdn.example.com/clinic.png' : f.placeholder ? `value-${f.kind}` : f.sample]),
    );
    const result = fillTemplate(draft, { to: '919876543210', values });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.template.components).toEqual([
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://cdn.example.com/clinic.png' } }] },
      { type: 'body', parameters: [{ type: 'text', parameter_name: 'patient', text: 'Ada' }, { type: 'text', parameter_name: 'slot', text: 'Tuesday 10:00' }] },
      { type: 'button', sub_type: 'url', index: '0', parameters: [{ type: 'text', text: 'value-text' }] },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'value-payload' }] },
    ]);
    // The draft itself is untouched: it can be filled again for another customer.
    expect(draft.template.components?.[0]?.parameters?.[0]).toEqual({ type: 'image', image: { link: '<IMAGE_URL>' } });
  });

  test('every variable must be filled; the first missing one is the field', () => {
    const draft = draftOf(CONSOLE_BRACES);
    const result = fillTemplate(draft, { to: '12025550101', values: { [draft.fields[0]!.path]: 'Ada', [draft.fields[1]!.path]: '  ' } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ code: 'invalid_input', field: 'template.components[0].parameters[1].text' });
    expect(result.error.message).toContain('Body {{2}}, Body {{3}}');
  });

  test('a value that is still a placeholder, or a link that is not one, is refused at its path', () => {
    const draft = draftOf(CONSOLE_SAMPLES);
    const values = Object.fromEntries(draft.fields.map((f) => [f.path, f.kind === 'link' ? 'clinic.png' : 'x']));
    const badLink = fillTemplate(draft, { to: '919876543210', values });
    expect(badLink.ok).toBe(false);
    if (!badLink.ok) expect(badLink.error.field).toBe('template.components[0].parameters[0].image.link');
    const braces = draftOf(CONSOLE_BRACES);
    const kept = fillTemplate(braces, { to: '12025550101', values: Object.fromEntries(braces.fields.map((f) => [f.path, f.sample])) });
    expect(kept.ok).toBe(false);
    if (!kept.ok) {
      expect(kept.error.field).toBe('template.components[0].parameters[0].text');
      expect(kept.error.message).toContain('still a placeholder');
    }
  });

  test('the number must be a real one; pure digits are the gateway form', () => {
    const draft = draftOf(CONSOLE_BRACES);
    const values = Object.fromEntries(draft.fields.map((f, i) => [f.path, `v${i}`]));
    for (const to of ['', 'abc', '+1 202', '<USER_PHONE_NUMBER>']) {
      const result = fillTemplate(draft, { to, values });
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toMatchObject({ code: 'invalid_input', field: 'to' });
    }
    expect(fillTemplate(draft, { to: '442079460101', values }).ok).toBe(true);
    expect(fillTemplate(draft, { to: '020 7946 0101', values, defaultCountry: 'GB' })).toMatchObject({ ok: true, value: { to: '442079460101' } });
  });
});
