// The id translation, one JSON file per part of the UI (see the README, "Languages").
import common from './common.json';
import calls from './calls.json';
import settings from './settings.json';
import messages from './messages.json';
import errors from './errors.json';
import rules from './rules.json';

export default { common, calls, settings, messages, errors, rules };
