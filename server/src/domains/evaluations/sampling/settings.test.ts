/** The sampling job's settings: the period and the settle delay, with their documented defaults and ranges. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../config.js';
import { DEFAULT_SAMPLING_SETTINGS } from './job.js';

describe('evaluation sampling settings', () => {
  it('default: a tick every 60 s, runs looked at 300 s after their start', () => {
    expect(loadConfig({}).evaluationSampling).toEqual({ everySeconds: 60, settleSeconds: 300 });
    expect(DEFAULT_SAMPLING_SETTINGS).toEqual({ everySeconds: 60, settleSeconds: 300 });
  });

  it('SVC_EVAL_SAMPLING_INTERVAL_SECONDS and SVC_EVAL_SAMPLING_SETTLE_SECONDS set them', () => {
    expect(loadConfig({ SVC_EVAL_SAMPLING_INTERVAL_SECONDS: '5', SVC_EVAL_SAMPLING_SETTLE_SECONDS: '0' }).evaluationSampling).toEqual({ everySeconds: 5, settleSeconds: 0 });
  });

  it('a value out of range or not a whole number stops the start, naming the variable', () => {
    for (const [name, v] of [
      ['SVC_EVAL_SAMPLING_INTERVAL_SECONDS', '4'],
      ['SVC_EVAL_SAMPLING_INTERVAL_SECONDS', '86401'],
      ['SVC_EVAL_SAMPLING_INTERVAL_SECONDS', '1.5'],
      ['SVC_EVAL_SAMPLING_SETTLE_SECONDS', '-1'],
      ['SVC_EVAL_SAMPLING_SETTLE_SECONDS', 'soon'],
    ])
      expect(() => loadConfig({ [name]: v })).toThrow(name);
  });
});
