// Keys are checked at compile time against the English resources: a t('calls:…') that names no
// string is a type error.
import 'i18next';
import type en from '../../shared/i18n/locales/en/index';

declare module 'i18next' {
  interface CustomTypeOptions {
    defaultNS: 'common';
    resources: typeof en;
    returnNull: false;
  }
}
