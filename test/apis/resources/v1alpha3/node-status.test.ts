import { nodeStatus } from '../../../../src/apis/resources/v1alpha3/node-status.js';
import { node } from './fixtures.js';

describe('nodeStatus', () => {
  const healthy = [
    { type: 'Ready', status: 'True' },
    { type: 'MemoryPressure', status: 'False' },
    { type: 'DiskPressure', status: 'False' },
    { type: 'PIDPressure', status: 'False' },
    { type: 'NetworkUnavailable', status: 'False' },
  ];

  it.each([
    ['every expected condition holds', { conditions: healthy }, 'running'],
    ['there are no conditions', { conditions: [] }, 'running'],
    ['Ready is False', { conditions: [{ type: 'Ready', status: 'False' }] }, 'warning'],
    ['Ready is Unknown', { conditions: [{ type: 'Ready', status: 'Unknown' }] }, 'warning'],
    ['memory is under pressure', { conditions: [...healthy, { type: 'MemoryPressure', status: 'True' }] }, 'warning'],
    ['disk is under pressure', { conditions: [{ type: 'DiskPressure', status: 'True' }] }, 'warning'],
    ['PIDs are under pressure', { conditions: [{ type: 'PIDPressure', status: 'True' }] }, 'warning'],
    ['the network is unavailable', { conditions: [{ type: 'NetworkUnavailable', status: 'True' }] }, 'warning'],
    ['ConfigOK is False', { conditions: [{ type: 'ConfigOK', status: 'False' }] }, 'warning'],
    ['KubeletReady is False', { conditions: [{ type: 'KubeletReady', status: 'False' }] }, 'warning'],
    ['only an unknown condition is bad', { conditions: [{ type: 'KernelDeadlock', status: 'True' }] }, 'running'],
    ['the node is cordoned', { unschedulable: true, conditions: healthy }, 'unschedulable'],
    [
      'the node is cordoned and not ready',
      { unschedulable: true, conditions: [{ type: 'Ready', status: 'False' }] },
      'unschedulable',
    ],
    ['unschedulable is false', { unschedulable: false, conditions: healthy }, 'running'],
  ])('when %s, then the node is %s', (_case, shape, expected) => {
    expect(nodeStatus(node('n', shape))).toBe(expected);
  });

  it('when the node has no spec or status at all, then it is running', () => {
    expect(nodeStatus({ metadata: { name: 'bare' } })).toBe('running');
  });
});
