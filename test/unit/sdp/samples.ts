// The session descriptions of test/fixtures/sdp.ts, under the path some tests import them from.
export { chromiumAnswer, chromiumOffer, customerOffer, withLine, withoutLines } from '../../fixtures/sdp';
