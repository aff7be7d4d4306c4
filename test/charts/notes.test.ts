import { CHART_DIR, helm, NAMESPACE, RELEASE, setValues } from './helm.js';

/** The NOTES.txt Helm prints after `helm install`. */
async function installNotes(values: Record<string, string | number | boolean> = {}): Promise<string> {
  const result = await helm(['install', '--dry-run=client', RELEASE, CHART_DIR, '--namespace', NAMESPACE, ...setValues(values)]);
  if (result.code !== 0) throw new Error(`helm install --dry-run failed: ${result.stderr}`);
  const notes = result.stdout.split('\nNOTES:\n')[1];
  if (notes === undefined) throw new Error('helm install printed no NOTES');
  return notes;
}

describe('chart install notes', () => {
  test('when installed with default values, then the notes show the password, the port-forward and the curl walk-through', async () => {
    const notes = await installNotes();
    expect(notes).toContain("kubectl -n kapi-system get secret kapi-admin -o jsonpath='{.data.password}' | base64 -d");
    expect(notes).toContain('kubectl port-forward -n kapi-system svc/kapi-apiserver 9090:80');
    const token = notes.indexOf('"$KAPI/oauth/token"');
    const nodes = notes.indexOf('"$KAPI/kapis/resources.kapi.io/v1alpha3/nodes');
    const namespaces = notes.indexOf('"$KAPI/api/v1/namespaces"');
    expect(token).toBeGreaterThan(-1);
    expect(nodes).toBeGreaterThan(token);
    expect(namespaces).toBeGreaterThan(nodes);
    expect(notes).toContain('--set service.type=NodePort');
  });

  test('when the Service is a NodePort, then the notes say how to find http://<node_ip>:<node_port>', async () => {
    const notes = await installNotes({ 'service.type': 'NodePort', 'service.nodePort': 30880 });
    expect(notes).toContain('http://<node_ip>:<node_port>');
    expect(notes).toContain(`jsonpath='{.spec.ports[?(@.name=="http")].nodePort}'`);
    expect(notes).not.toContain('kubectl port-forward -n kapi-system svc/kapi-apiserver');
  });

  test('when generateSecrets=false, then the notes say the signing key Secret must be created and how', async () => {
    const notes = await installNotes({ generateSecrets: false });
    expect(notes).toContain('kubectl -n kapi-system create secret generic kapi-apiserver-jwt');
    expect(notes).not.toContain('get secret kapi-admin');
  });
});
