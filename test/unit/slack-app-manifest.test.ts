import { describe, expect, it } from 'vitest';
import { buildSlackAppManifest } from '../../shared/slack-app/manifest';

describe('Slack app manifest', () => {
  it('points the command, interactivity and events at the API, with the minimal scopes and no history scope', () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://abc.execute-api.eu-west-1.amazonaws.com/' });
    expect(manifest.features.slash_commands).toEqual([
      expect.objectContaining({
        command: '/visibility',
        url: 'https://abc.execute-api.eu-west-1.amazonaws.com/slack/commands',
        should_escape: false,
      }),
    ]);
    expect(manifest.settings.interactivity).toEqual({
      is_enabled: true,
      request_url: 'https://abc.execute-api.eu-west-1.amazonaws.com/slack/interactions',
    });
    // App Home: the Home tab, and the one bot event that publishes it, at the events route.
    expect(manifest.features.app_home).toEqual({ home_tab_enabled: true });
    expect(manifest.settings.event_subscriptions).toEqual({
      request_url: 'https://abc.execute-api.eu-west-1.amazonaws.com/slack/events',
      bot_events: ['app_home_opened'],
    });
    expect(manifest.oauth_config.scopes.bot).toEqual(['commands', 'chat:write', 'channels:history', 'channels:read', 'usergroups:read']);
    expect(manifest.settings.token_rotation_enabled).toBe(false);
  });

  it('asks for files:write only when the stage uploads the PNG chart on a refused native one', () => {
    const base = 'https://api.example.com';
    expect(buildSlackAppManifest({ baseUrl: base }).oauth_config.scopes.bot).not.toContain('files:write');
    expect(buildSlackAppManifest({ baseUrl: base, pngFallback: false }).oauth_config.scopes.bot).not.toContain('files:write');
    expect(buildSlackAppManifest({ baseUrl: base, pngFallback: true }).oauth_config.scopes.bot).toContain('files:write');
  });

  it("asks for the history scopes with the history look-up (a single-workspace deploy's default)", () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com', postRecovery: 'history', privateChannels: true });
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(['channels:history', 'groups:history', 'groups:read']));
    expect(manifest.oauth_config.scopes.bot).not.toContain('metadata.message:read');
    expect(manifest.settings.event_subscriptions?.bot_events).toEqual(['app_home_opened']);
  });

  it('with the posted ledger: no history scope, the metadata scope and its event', () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com', postRecovery: 'ledger', privateChannels: true });
    expect(manifest.oauth_config.scopes.bot.filter((s) => s.endsWith(':history'))).toEqual([]);
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(['metadata.message:read', 'groups:read']));
    expect(manifest.settings.event_subscriptions?.bot_events).toEqual(['app_home_opened', 'message_metadata_posted']);
  });

  it('for "Add to Slack": the redirect URL, token rotation, org-wide installs and the uninstall events', () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com/prod', distributed: true });
    expect(manifest.oauth_config.redirect_urls).toEqual(['https://api.example.com/prod/slack/oauth_redirect']);
    expect(manifest.settings).toMatchObject({ token_rotation_enabled: true, org_deploy_enabled: true });
    expect(manifest.settings.event_subscriptions.bot_events).toEqual([
      'app_home_opened',
      'message_metadata_posted',
      'app_uninstalled',
      'tokens_revoked',
    ]);
    expect(manifest.oauth_config.scopes.bot.filter((s) => s.endsWith(':history'))).toEqual([]);
  });

  it('keeps a stage path, adds groups:history and groups:read for private channels and caps the name', () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com/prod', privateChannels: true, appName: 'x'.repeat(50) });
    expect(manifest.settings.interactivity.request_url).toBe('https://api.example.com/prod/slack/interactions');
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(['groups:history', 'groups:read']));
    expect(manifest.display_information.name).toHaveLength(35);
  });

  it('accepts http for the local stack only, and says what to fix otherwise', () => {
    expect(buildSlackAppManifest({ baseUrl: 'http://127.0.0.1:3000' }).settings.interactivity.request_url).toBe(
      'http://127.0.0.1:3000/slack/interactions',
    );
    expect(() => buildSlackAppManifest({ baseUrl: 'http://api.example.com' })).toThrow(/must start with https/);
    expect(() => buildSlackAppManifest({ baseUrl: 'not a url' })).toThrow(/is not a URL/);
    expect(() => buildSlackAppManifest({ baseUrl: 'https://api.example.com/?x=1' })).toThrow(/query or fragment/);
  });
});
