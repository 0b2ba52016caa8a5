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
    expect(manifest.oauth_config.scopes.bot).toEqual([
      'commands',
      'chat:write',
      'files:write',
      'metadata.message:read',
      'channels:read',
      'usergroups:read',
    ]);
    expect(manifest.settings.event_subscriptions).toEqual({
      request_url: 'https://abc.execute-api.eu-west-1.amazonaws.com/slack/events',
      bot_events: ['message_metadata_posted'],
    });
    expect(manifest.settings.token_rotation_enabled).toBe(false);
  });

  it("asks for the history scopes, and subscribes to no event, with the history look-up (a single-workspace deploy's default)", () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com', postRecovery: 'history', privateChannels: true });
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(['channels:history', 'groups:history', 'groups:read']));
    expect(manifest.oauth_config.scopes.bot).not.toContain('metadata.message:read');
    expect(manifest.settings.event_subscriptions).toBeUndefined();
  });

  it('for "Add to Slack": the redirect URL, token rotation, org-wide installs and the uninstall events', () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com/prod', distributed: true });
    expect(manifest.oauth_config.redirect_urls).toEqual(['https://api.example.com/prod/slack/oauth_redirect']);
    expect(manifest.settings).toMatchObject({ token_rotation_enabled: true, org_deploy_enabled: true });
    expect(manifest.settings.event_subscriptions?.bot_events).toEqual(['message_metadata_posted', 'app_uninstalled', 'tokens_revoked']);
    expect(manifest.oauth_config.scopes.bot.filter((s) => s.endsWith(':history'))).toEqual([]);
  });

  it('keeps a stage path, adds groups:read for private channels and caps the name', () => {
    const manifest = buildSlackAppManifest({ baseUrl: 'https://api.example.com/prod', privateChannels: true, appName: 'x'.repeat(50) });
    expect(manifest.settings.interactivity.request_url).toBe('https://api.example.com/prod/slack/interactions');
    expect(manifest.oauth_config.scopes.bot).toEqual(expect.arrayContaining(['groups:read']));
    expect(manifest.oauth_config.scopes.bot).not.toContain('groups:history');
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
