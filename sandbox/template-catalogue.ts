// The sandbox account's approved templates, and the "API Payload" its template list would show for
// each (gateway-spec.md 4.3): the JSON an agent pastes into the app. Sending checks a template
// against this list like the real service: an unknown name or language is error 132001, a wrong
// number of variables 132000.
import type { SandboxTemplate } from '../shared/sandbox';
import type { TemplateMessage } from '../shared/templates';
import type { GraphFailure } from './graph-error';

interface TemplateDefinition {
  name: string;
  language: string;
  category: SandboxTemplate['category'];
  body: string;
  /** A header with one image parameter. */
  imageHeader?: boolean;
  /** What the console puts where the variables go: placeholders of one style, or sample values. */
  samples: readonly string[];
  headerSample?: string;
}

const DEFINITIONS: readonly TemplateDefinition[] = [
  {
    name: 'order_update',
    language: 'en_US',
    category: 'UTILITY',
    body: 'Hello {{1}}, your order {{2}} has shipped and arrives on {{3}}.',
    samples: ['{{1}}', '{{2}}', '{{3}}'],
  },
  {
    name: 'missed_call_followup',
    language: 'en',
    category: 'UTILITY',
    body: 'Hi {{1}}, sorry we missed you. Reply to this message and we will call you back about {{2}}.',
    samples: ['<VALUE>', '<VALUE>'],
  },
  {
    name: 'appointment_reminder',
    language: 'en_GB',
    category: 'UTILITY',
    body: 'Dear {{1}}, this is a reminder of your appointment on {{2}}.',
    imageHeader: true,
    samples: ['Ada', 'Tuesday 10:00'],
    headerSample: '<IMAGE_URL>',
  },
  { name: 'welcome_back', language: 'en', category: 'MARKETING', body: 'Welcome back! Reply to this message to talk to us.', samples: [] },
];

const variablesIn = (body: string) => new Set(body.match(/\{\{\d+\}\}/g) ?? []).size;

export function templateCatalogue(product: string): SandboxTemplate[] {
  return DEFINITIONS.map((d) => ({ name: d.name, language: d.language, category: d.category, body: d.body, apiPayload: apiPayloadOf(d, product) }));
}

function apiPayloadOf(d: TemplateDefinition, product: string): string {
  const components: unknown[] = [];
  if (d.imageHeader) components.push({ type: 'header', parameters: [{ type: 'image', image: { link: d.headerSample ?? '<IMAGE_URL>' } }] });
  if (d.samples.length > 0) components.push({ type: 'body', parameters: d.samples.map((text) => ({ type: 'text', text })) });
  const template = { name: d.name, language: { code: d.language }, ...(components.length > 0 ? { components } : {}) };
  return JSON.stringify({ messaging_product: product, recipient_type: 'individual', to: '<USER_PHONE_NUMBER>', type: 'template', template }, null, 2);
}

/** Why the account cannot send this template, or undefined when it can. */
export function templateProblem(message: TemplateMessage): GraphFailure | undefined {
  const { name, language } = message.template;
  const definition = DEFINITIONS.find((d) => d.name === name && d.language === language.code);
  if (!definition) {
    const other = DEFINITIONS.filter((d) => d.name === name).map((d) => d.language);
    return {
      status: 404,
      code: 132001,
      message: '(#132001) Template name does not exist in the translation',
      details: other.length > 0 ? `template name (${name}) does not exist in ${language.code}; it exists in ${other.join(', ')}` : `template name (${name}) does not exist in ${language.code}`,
    };
  }
  const count = (type: string) => (message.template.components ?? []).filter((c) => c.type === type).reduce((n, c) => n + (c.parameters?.length ?? 0), 0);
  const expected = { header: definition.imageHeader ? 1 : 0, body: variablesIn(definition.body) };
  for (const part of ['header', 'body'] as const) {
    const received = count(part);
    if (received !== expected[part]) {
      return {
        status: 400,
        code: 132000,
        message: '(#132000) Number of parameters does not match the expected number of params',
        details: `${part}: number of localizable_params (${received}) does not match the expected number of params (${expected[part]})`,
      };
    }
  }
  return undefined;
}
