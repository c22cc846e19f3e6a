import { useTranslation } from 'react-i18next';
import { MESSAGE_LIMITS } from '../../shared/messages';
import { useMessaging } from '../app/controllers-context';
import { formatNumber } from '../i18n/format';
import {
  FIELD_LIMITS,
  INTERACTIVE_VARIANTS,
  emptyInteractive,
  variantLabel,
  visibleError,
  type ComposerDraft,
  type CtaHeaderType,
  type InteractiveDraft,
  type InteractiveVariant,
} from '../store/composer';
import { FormField } from './FormField';

interface Props {
  contact: string;
  draft: ComposerDraft;
  /** Live rule per field key (the message's own paths). */
  live: Readonly<Record<string, string>>;
  disabled: boolean;
}

const BODY_KEY = 'interactive.body.text';
const FOOTER_KEY = 'interactive.footer.text';
const HEADER_KEY = 'interactive.header.text';
const PARAMS = 'interactive.action.parameters';

/** Every field key the form shows for a variant, so that rules about anything else are listed apart. */
export function interactiveKeys(d: InteractiveDraft): Set<string> {
  const keys: string[] = [];
  switch (d.variant) {
    case 'button':
      keys.push(HEADER_KEY, BODY_KEY, FOOTER_KEY, ...d.buttons.map((_, i) => `interactive.action.buttons[${i}].reply.title`));
      break;
    case 'list':
      keys.push(HEADER_KEY, BODY_KEY, FOOTER_KEY, 'interactive.action.button');
      d.sections.forEach((s, si) => {
        keys.push(`interactive.action.sections[${si}].title`);
        s.rows.forEach((_, ri) => keys.push(`interactive.action.sections[${si}].rows[${ri}].title`, `interactive.action.sections[${si}].rows[${ri}].description`));
      });
      break;
    case 'cta_url':
      keys.push(ctaHeaderKey(d.ctaHeaderType), BODY_KEY, FOOTER_KEY, `${PARAMS}.display_text`, `${PARAMS}.url`);
      break;
    case 'flow':
      keys.push(HEADER_KEY, BODY_KEY, FOOTER_KEY, `${PARAMS}.${d.flowBy === 'name' ? 'flow_name' : 'flow_id'}`, `${PARAMS}.flow_cta`, `${PARAMS}.flow_message_version`);
      break;
    case 'address_message':
      keys.push(BODY_KEY, `${PARAMS}.country`);
      break;
    case 'voice_call':
      keys.push('bodyText', 'displayText', 'ttlMinutes');
      break;
  }
  return new Set(keys);
}

const CTA_HEADER_TYPES: readonly CtaHeaderType[] = ['none', 'text', 'image', 'video', 'document'];

const ctaHeaderKey = (type: CtaHeaderType) => (type === 'text' || type === 'none' ? HEADER_KEY : `interactive.header.${type}.link`);

/** One form per interactive variant (gateway-spec.md 4.1), each field checked as the agent types. */
export function InteractiveForm({ contact, draft, live, disabled }: Props) {
  const { t } = useTranslation('messages');
  const messaging = useMessaging();
  const d = draft.interactive;
  const idBase = `ia-${contact}`;
  const edit = (key: string, change: (i: InteractiveDraft) => InteractiveDraft) =>
    messaging.editComposer(contact, (c) => ({ ...c, interactive: change(c.interactive) }), key);
  const err = (key: string) => visibleError(draft, live, key);
  const field = (key: string, label: string, value: string, set: (v: string) => Partial<InteractiveDraft>, extra: Partial<Parameters<typeof FormField>[0]> = {}) => (
    <FormField
      id={`${idBase}-${key.replace(/[^a-z0-9]+/gi, '-')}`}
      label={label}
      value={value}
      error={err(key)}
      disabled={disabled}
      onChange={(v) => edit(key, (i) => ({ ...i, ...set(v) }))}
      {...extra}
    />
  );

  const bodyKey = d.variant === 'voice_call' ? 'bodyText' : BODY_KEY;
  const hasTextHeader = d.variant === 'button' || d.variant === 'list' || d.variant === 'flow';
  const hasFooter = d.variant !== 'address_message' && d.variant !== 'voice_call';

  return (
    <div className="interactive-form">
      <div className="field">
        <label htmlFor={`${idBase}-variant`} className="field-label">
          {t('interactive.typeLabel')}
        </label>
        <select
          id={`${idBase}-variant`}
          className="input"
          value={d.variant}
          disabled={disabled}
          onChange={(e) => {
            const variant = e.target.value as InteractiveVariant;
            // The words typed so far travel to the new variant; its own fields start empty.
            messaging.editComposer(contact, (c) => ({
              ...c,
              touched: {},
              showAllErrors: false,
              serverErrors: {},
              interactive: { ...emptyInteractive(variant), headerText: c.interactive.headerText, body: c.interactive.body, footer: c.interactive.footer },
            }));
          }}
        >
          {INTERACTIVE_VARIANTS.map((v) => (
            <option key={v} value={v}>
              {variantLabel(v)}
            </option>
          ))}
        </select>
      </div>

      {hasTextHeader && field(HEADER_KEY, t('interactive.header'), d.headerText, (v) => ({ headerText: v }), { limit: FIELD_LIMITS.header })}
      {d.variant === 'cta_url' && <CtaHeader {...{ contact, d, disabled, err, edit }} />}
      {field(bodyKey, d.variant === 'voice_call' ? t('interactive.message') : t('interactive.body'), d.body, (v) => ({ body: v }), {
        multiline: true,
        rows: 2,
        limit: FIELD_LIMITS.body,
        ...(d.variant === 'voice_call' ? { placeholder: t('interactive.messagePlaceholder') } : {}),
      })}
      {hasFooter && field(FOOTER_KEY, t('interactive.footer'), d.footer, (v) => ({ footer: v }), { limit: FIELD_LIMITS.footer })}

      {d.variant === 'button' && (
        <fieldset className="group">
          <legend className="field-label">{t('interactive.buttons')}</legend>
          {d.buttons.map((title, i) => (
            <div className="row-with-remove" key={i}>
              {field(`interactive.action.buttons[${i}].reply.title`, t('interactive.buttonTitle', { n: formatNumber(i + 1) }), title, () => ({}), {
                limit: FIELD_LIMITS.buttonTitle,
                onChange: (v: string) => edit(`interactive.action.buttons[${i}].reply.title`, (x) => ({ ...x, buttons: x.buttons.map((b, j) => (j === i ? v : b)) })),
              })}
              {d.buttons.length > 1 && (
                <button type="button" className="btn btn-quiet btn-remove" disabled={disabled} aria-label={t('interactive.removeButton', { n: formatNumber(i + 1) })} onClick={() => edit('buttons', (x) => ({ ...x, buttons: x.buttons.filter((_, j) => j !== i) }))}>
                  ×
                </button>
              )}
            </div>
          ))}
          {d.buttons.length < FIELD_LIMITS.replyButtons && (
            <button type="button" className="btn btn-link" disabled={disabled} onClick={() => edit('buttons', (x) => ({ ...x, buttons: [...x.buttons, ''] }))}>
              {t('interactive.addButton')}
            </button>
          )}
        </fieldset>
      )}

      {d.variant === 'list' && (
        <>
          {field('interactive.action.button', t('interactive.listButton'), d.listButton, (v) => ({ listButton: v }), {
            limit: FIELD_LIMITS.listButton,
            placeholder: t('interactive.listButtonPlaceholder'),
          })}
          {d.sections.map((section, si) => (
            <fieldset className="group" key={si}>
              <legend className="field-label">{t('interactive.section', { n: formatNumber(si + 1) })}</legend>
              <div className="row-with-remove">
                {field(`interactive.action.sections[${si}].title`, t('interactive.sectionTitle', { n: formatNumber(si + 1) }), section.title, () => ({}), {
                  limit: FIELD_LIMITS.sectionTitle,
                  onChange: (v: string) => edit(`interactive.action.sections[${si}].title`, (x) => ({ ...x, sections: x.sections.map((s, j) => (j === si ? { ...s, title: v } : s)) })),
                })}
                {d.sections.length > 1 && (
                  <button type="button" className="btn btn-quiet btn-remove" disabled={disabled} aria-label={t('interactive.removeSection', { n: formatNumber(si + 1) })} onClick={() => edit('sections', (x) => ({ ...x, sections: x.sections.filter((_, j) => j !== si) }))}>
                    ×
                  </button>
                )}
              </div>
              {section.rows.map((row, ri) => {
                const rowKey = `interactive.action.sections[${si}].rows[${ri}]`;
                const setRow = (patch: Partial<{ title: string; description: string }>) => (x: InteractiveDraft) => ({
                  ...x,
                  sections: x.sections.map((s, j) => (j === si ? { ...s, rows: s.rows.map((r, k) => (k === ri ? { ...r, ...patch } : r)) } : s)),
                });
                return (
                  <div className="list-row" key={ri}>
                    <div className="row-with-remove">
                      {field(`${rowKey}.title`, t('interactive.rowTitle', { n: formatNumber(ri + 1) }), row.title, () => ({}), { limit: FIELD_LIMITS.rowTitle, onChange: (v: string) => edit(`${rowKey}.title`, setRow({ title: v })) })}
                      {section.rows.length > 1 && (
                        <button
                          type="button"
                          className="btn btn-quiet btn-remove"
                          disabled={disabled}
                          aria-label={t('interactive.removeRow', { row: formatNumber(ri + 1), section: formatNumber(si + 1) })}
                          onClick={() => edit('rows', (x) => ({ ...x, sections: x.sections.map((s, j) => (j === si ? { ...s, rows: s.rows.filter((_, k) => k !== ri) } : s)) }))}
                        >
                          ×
                        </button>
                      )}
                    </div>
                    {field(`${rowKey}.description`, t('interactive.rowDescription', { n: formatNumber(ri + 1) }), row.description, () => ({}), {
                      limit: FIELD_LIMITS.rowDescription,
                      onChange: (v: string) => edit(`${rowKey}.description`, setRow({ description: v })),
                    })}
                  </div>
                );
              })}
              <button
                type="button"
                className="btn btn-link"
                disabled={disabled}
                onClick={() => edit('rows', (x) => ({ ...x, sections: x.sections.map((s, j) => (j === si ? { ...s, rows: [...s.rows, { title: '', description: '' }] } : s)) }))}
              >
                {t('interactive.addRow', { n: formatNumber(si + 1) })}
              </button>
            </fieldset>
          ))}
          {d.sections.length < FIELD_LIMITS.listSections && (
            <button type="button" className="btn btn-link" disabled={disabled} onClick={() => edit('sections', (x) => ({ ...x, sections: [...x.sections, { title: '', rows: [{ title: '', description: '' }] }] }))}>
              {t('interactive.addSection')}
            </button>
          )}
          <p className="hint">{t('interactive.listLimits', { rows: formatNumber(FIELD_LIMITS.listRows), sections: formatNumber(FIELD_LIMITS.listSections) })}</p>
        </>
      )}

      {d.variant === 'cta_url' && (
        <>
          {field(`${PARAMS}.display_text`, t('interactive.buttonText'), d.ctaDisplayText, (v) => ({ ctaDisplayText: v }), {
            limit: FIELD_LIMITS.ctaDisplayText,
            placeholder: t('interactive.ctaTextPlaceholder'),
          })}
          {field(`${PARAMS}.url`, t('interactive.buttonLink'), d.ctaUrl, (v) => ({ ctaUrl: v }), { type: 'url', inputMode: 'url', placeholder: t('interactive.ctaUrlPlaceholder') })}
        </>
      )}

      {d.variant === 'flow' && (
        <>
          <div className="field">
            <span className="field-label" id={`${idBase}-flowby`}>
              {t('interactive.flowBy')}
            </span>
            <div className="segmented" role="radiogroup" aria-labelledby={`${idBase}-flowby`}>
              {(['name', 'id'] as const).map((by) => (
                <label key={by} className={`segment ${d.flowBy === by ? 'is-on' : ''}`}>
                  <input type="radio" name={`${idBase}-flowby`} value={by} checked={d.flowBy === by} disabled={disabled} onChange={() => edit('flowBy', (x) => ({ ...x, flowBy: by }))} />
                  {by === 'name' ? t('interactive.flowName') : t('interactive.flowId')}
                </label>
              ))}
            </div>
          </div>
          {field(`${PARAMS}.${d.flowBy === 'name' ? 'flow_name' : 'flow_id'}`, d.flowBy === 'name' ? t('interactive.flowName') : t('interactive.flowId'), d.flowRef, (v) => ({ flowRef: v }))}
          {field(`${PARAMS}.flow_cta`, t('interactive.buttonText'), d.flowCta, (v) => ({ flowCta: v }), { limit: FIELD_LIMITS.flowCta, placeholder: t('interactive.flowCtaPlaceholder') })}
          {field(`${PARAMS}.flow_message_version`, t('interactive.flowVersion'), d.flowVersion, (v) => ({ flowVersion: v }), { inputMode: 'numeric' })}
        </>
      )}

      {d.variant === 'address_message' &&
        field(`${PARAMS}.country`, t('interactive.country'), d.country, (v) => ({ country: v.toUpperCase() }), {
          placeholder: t('interactive.countryPlaceholder'),
          hint: t('interactive.countryHint'),
        })}

      {d.variant === 'voice_call' && (
        <>
          {field('displayText', t('interactive.buttonText'), d.callDisplayText, (v) => ({ callDisplayText: v }), { limit: FIELD_LIMITS.callDisplayText })}
          {field('ttlMinutes', t('interactive.validFor'), d.callTtlMinutes, (v) => ({ callTtlMinutes: v }), {
            inputMode: 'numeric',
            hint: t('interactive.validForHint', {
              max: formatNumber(MESSAGE_LIMITS.voiceCallTtlMinutesMax, { useGrouping: false }),
              days: formatNumber(MESSAGE_LIMITS.voiceCallTtlMinutesMax / (24 * 60)),
            }),
          })}
        </>
      )}
    </div>
  );
}

function CtaHeader({
  contact,
  d,
  disabled,
  err,
  edit,
}: {
  contact: string;
  d: InteractiveDraft;
  disabled: boolean;
  err: (key: string) => string | undefined;
  edit: (key: string, change: (i: InteractiveDraft) => InteractiveDraft) => void;
}) {
  const { t } = useTranslation('messages');
  const id = `ia-${contact}-cta-header`;
  const key = ctaHeaderKey(d.ctaHeaderType);
  return (
    <>
      <div className="field">
        <label htmlFor={`${id}-type`} className="field-label">
          {t('interactive.ctaHeader')}
        </label>
        <select
          id={`${id}-type`}
          className="input"
          value={d.ctaHeaderType}
          disabled={disabled}
          onChange={(e) => edit('ctaHeaderType', (x) => ({ ...x, ctaHeaderType: e.target.value as CtaHeaderType, ctaHeaderValue: '' }))}
        >
          {CTA_HEADER_TYPES.map((type) => (
            <option key={type} value={type}>
              {t(`interactive.ctaHeaderTypes.${type}`)}
            </option>
          ))}
        </select>
      </div>
      {d.ctaHeaderType !== 'none' && (
        <FormField
          id={`${id}-value`}
          label={d.ctaHeaderType === 'text' ? t('interactive.ctaHeaderText') : t(`interactive.ctaHeaderLink.${d.ctaHeaderType}`)}
          value={d.ctaHeaderValue}
          error={err(key)}
          disabled={disabled}
          {...(d.ctaHeaderType === 'text' ? { limit: FIELD_LIMITS.header } : { type: 'url' as const, inputMode: 'url' as const, placeholder: t('interactive.linkPlaceholder') })}
          onChange={(v) => edit(key, (x) => ({ ...x, ctaHeaderValue: v }))}
        />
      )}
    </>
  );
}
