// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The official JavaScript client's informer (makeInformer) on the pods of one
// namespace, printing what it sees as JSON lines on stdout, until SIGTERM:
//   {"on": "add"|"update"|"delete", "name": NAME, "rv": RESOURCE_VERSION}
//   {"on": "connect"}          a (re)list-and-watch begins
//   {"on": "error", "error": MESSAGE}
// The informer is restarted 200 ms after an error, as client-node's README shows.
//   node informer.mjs KUBECONFIG NAMESPACE
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, namespace] = process.argv.slice(2);
if (!kubeconfig || !namespace) {
	console.error('usage: node informer.mjs KUBECONFIG NAMESPACE');
	process.exit(2);
}
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const api = kc.makeApiClient(k8s.CoreV1Api);
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () =>
	api.listNamespacedPod({ namespace }),
);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const seen = (on) => (obj) =>
	say({ on, name: obj.metadata.name, rv: obj.metadata.resourceVersion });
informer.on('add', seen('add'));
informer.on('update', seen('update'));
informer.on('delete', seen('delete'));
informer.on('connect', () => say({ on: 'connect' }));
informer.on('error', (err) => {
	say({ on: 'error', error: String(err && err.message ? err.message : err) });
	setTimeout(() => informer.start().catch((e) => console.error('restart failed:', e)), 200);
});
process.on('SIGTERM', () => {
	informer.stop();
	process.exit(0);
});
await informer.start();
