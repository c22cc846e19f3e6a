import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { AfterCallWork } from '../components/AfterCallWork';
import { Announcer } from '../components/Announcer';
import { ContactPanel } from '../components/ContactPanel';
import { CurrentCallPanel } from '../components/CurrentCallPanel';
import { DeviceNotice } from '../components/DeviceNotice';
import { Dialer } from '../components/Dialer';
import { Header } from '../components/Header';
import { HostBanner } from '../components/HostBanner';
import { IncomingCalls } from '../components/IncomingCalls';
import { MonitorPanel } from '../components/MonitorPanel';
import { RecentCalls } from '../components/RecentCalls';
import { RingAlerts } from '../components/RingAlerts';
import { SandboxPanel } from '../components/SandboxPanel';
import { SettingsScreen } from '../components/SettingsScreen';
import { TeamView } from '../components/TeamView';
import { WrapUpPrompt } from '../components/WrapUpPrompt';
import { useAppStore } from '../store/store';

export function App() {
  const { t, i18n } = useTranslation('common');
  const screen = useAppStore((s) => s.screen);
  // The window's title in the UI's language (index.html's is the English one, until this runs).
  useEffect(() => {
    document.title = t('app.name');
  }, [t, i18n.language]);
  return (
    <div className={`app ${screen === 'settings' ? 'app-settings' : screen === 'team' ? 'app-team' : ''}`}>
      <Header />
      <HostBanner />
      <DeviceNotice />
      <RingAlerts />
      <main className="app-main">
        {/* A ringing call shows on every screen: the agent must be able to answer from Settings too. */}
        <IncomingCalls />
        {/* A supervisor in a team call leaves or switches from any screen. */}
        <MonitorPanel />
        {screen === 'settings' ? (
          <SettingsScreen />
        ) : screen === 'team' ? (
          <TeamView />
        ) : (
          <>
            {/* Narrow windows flow the two columns into one (styles.css orders the cards). */}
            <div className="col-phone">
              <CurrentCallPanel />
              <AfterCallWork />
              <WrapUpPrompt />
              <Dialer />
              <SandboxPanel />
              <RecentCalls />
            </div>
            <ContactPanel />
          </>
        )}
      </main>
      <Announcer />
    </div>
  );
}
