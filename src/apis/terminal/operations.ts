import { z } from 'zod';
import { defineOperation } from '../../openapi/operation.js';
import { StatusSchema, statusResponses } from '../../openapi/schemas.js';

export const openPodTerminal = defineOperation({
  operationId: 'openPodTerminal',
  method: 'get',
  path: '/kapis/terminal.kapi.io/v1alpha2/namespaces/{namespace}/pods/{pod}/exec',
  tags: ['terminal.kapi.io/v1alpha2'],
  summary: 'A container’s terminal (the console’s Terminal): a WebSocket exec into it, as the caller',
  description:
    'A WebSocket upgrade, as KubeSphere serves it: the console sends `{"Op":"stdin","Data":…}` and ' +
    '`{"Op":"resize","Rows":…,"Cols":…}`, and receives `{"Op":"stdout","Data":…}` (`toast` for kapi’s own words). ' +
    'kapi opens an exec (`v4.channel.k8s.io`) of the shell asked for (`bash` or `sh`; otherwise bash where the ' +
    'container has it, else sh) with a tty, impersonating the caller, so kube-apiserver decides it. Before any ' +
    'upgrade it needs `create pods/exec` (that pod) in the namespace, and the pod and container must exist. A refusal ' +
    'of kube-apiserver, or the command’s failure, is written to the terminal and closes the WebSocket with the reason. ' +
    'Asked without an upgrade (the console’s probe), it answers 400 once those checks pass.',
  security: 'bearer',
  pathParameters: z.object({
    namespace: z.string().describe('The pod’s namespace.'),
    pod: z.string().describe('The pod’s name.'),
  }),
  query: z.object({
    container: z.string().optional().describe('The container; the pod’s default one when absent.'),
    shell: z.string().optional().describe('`bash` or `sh`; anything else picks one.'),
  }),
  responses: {
    400: {
      description:
        'Not a WebSocket upgrade; or the container is not the pod’s, or the pod has completed (kube’s message).',
      body: StatusSchema,
    },
    403: { description: 'The cluster’s RBAC does not allow the caller `create pods/exec` there.', body: StatusSchema },
    404: { description: 'No such pod.', body: StatusSchema },
    ...statusResponses,
  },
});

export const terminalOperations = [openPodTerminal] as const;
