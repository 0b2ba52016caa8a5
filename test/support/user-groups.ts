/** A UserGroupMembers double: fixed groups; a group it doesn't know fails as Slack would (the domain's Unavailable). */
import { Unavailable } from '../../shared/errors';
import type { UserGroupMembers } from '../../shared/slack-app/ports';

export class StaticUserGroups implements UserGroupMembers {
  readonly asked: string[] = [];

  constructor(private readonly groups: Readonly<Record<string, readonly string[]>>) {}

  membersOf(groupId: string): Promise<ReadonlySet<string>> {
    this.asked.push(groupId);
    const members = this.groups[groupId];
    return members === undefined ? Promise.reject(new Unavailable(`group ${groupId} unreadable`)) : Promise.resolve(new Set(members));
  }
}
