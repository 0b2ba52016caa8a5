/** Alarms (to the alarm topic, on alarm and on recovery) and the stage's dashboard. */
import type { Alarm, Dashboard } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { alarmTopic } from './alarm-topic';
import { alarmArn, alarmSpecs, createAlarm, type AlarmSources } from './alarms';
import { createDashboard } from './dashboard';

export class Monitoring extends Construct {
  readonly topic: ITopic;
  readonly alarms: readonly Alarm[];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, sources: AlarmSources) {
    super(scope, id);
    const specs = alarmSpecs(sources);
    this.topic = alarmTopic(
      this,
      sources.config,
      specs.map((spec) => alarmArn(this, spec.id)),
    );
    this.alarms = specs.map((spec) => createAlarm(this, spec));
    const action = new SnsAction(this.topic);
    for (const alarm of this.alarms) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    this.dashboard = createDashboard(this, sources, [...this.alarms]);
  }
}
