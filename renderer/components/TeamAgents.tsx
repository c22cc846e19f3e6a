import { useTranslation } from 'react-i18next';
import type { BoardAgent } from '../bridge/payload-schemas';
import { agentStateText, elapsedText, sortedAgents } from '../wallboard-display';
import { Ltr } from './Ltr';

/** Every agent of the team by name: its state and, when the relay says since when, how long it has been in it. */
export function TeamAgents({ agents, relayNow }: { agents: readonly BoardAgent[]; relayNow: number }) {
  const { t } = useTranslation('common');
  // Sorted in the UI's language; a language change re-renders through useTranslation.
  const rows = sortedAgents(agents);
  return (
    <table className="team-agents">
      <caption className="team-agents-caption">{t('team.agents')}</caption>
      <thead>
        <tr>
          <th scope="col">{t('team.agent')}</th>
          <th scope="col">{t('team.state')}</th>
          <th scope="col">{t('team.timeInState')}</th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={3} className="team-nobody">
              {t('team.nobody')}
            </td>
          </tr>
        )}
        {rows.map((agent) => (
          <tr key={agent.agentId} className={agent.self ? 'is-self' : undefined}>
            <th scope="row">
              <bdi>{agent.name}</bdi>
              {agent.self && <span className="team-you"> {t('team.you')}</span>}
            </th>
            <td>
              <span className={`team-state team-state-${agent.presence}`}>{agentStateText(agent)}</span>
            </td>
            <td className="team-since">{agent.since !== undefined && <Ltr>{elapsedText(relayNow - agent.since)}</Ltr>}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
