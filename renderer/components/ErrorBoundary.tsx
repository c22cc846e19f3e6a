import { Component, type ErrorInfo, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { createLogger } from '../../shared/log';
import { errorText } from '../../shared/result';

const log = createLogger('ui');

/** A rendering bug shows a way out instead of a blank window. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { failed: string | null }> {
  override state = { failed: null as string | null };

  static getDerivedStateFromError(error: unknown) {
    return { failed: errorText(error) };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo) {
    log.error('the window failed to render', { error, componentStack: info.componentStack });
  }

  override render() {
    if (this.state.failed === null) return this.props.children;
    return <CrashNotice />;
  }
}

function CrashNotice() {
  const { t } = useTranslation('common');
  return (
    <div role="alert" className="banner banner-error crash">
      <p>{t('crash.message')}</p>
      <button type="button" className="btn btn-primary" onClick={() => window.location.reload()}>
        {t('crash.reload')}
      </button>
    </div>
  );
}
