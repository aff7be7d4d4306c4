import { GLOBAL_ROLE_ANNOTATION } from './role-templates.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Raw = any;

/**
 * A User as KubeSphere 3.4's iam API answers it (pure): `iam.kapi.io/v1alpha2`, with its platform role in the
 * annotation `iam.kapi.io/globalrole` (computed from its binding, never stored). `stored` is the listing's answer
 * body, from which what no answer may carry is already gone.
 */
export function platformUser(stored: Raw, globalRole: string | undefined): Raw {
  const metadata = stored?.metadata ?? {};
  const { [GLOBAL_ROLE_ANNOTATION]: _stored, ...annotations } = metadata.annotations ?? {};
  if (globalRole) annotations[GLOBAL_ROLE_ANNOTATION] = globalRole;
  const shownMetadata = { ...metadata, annotations };
  if (Object.keys(annotations).length === 0) delete shownMetadata.annotations;
  // a User with no state is Active (the CRD says so); KubeSphere's console shows a missing one as "Pending"
  const status = stored?.status?.state ? stored.status : { ...stored?.status, state: 'Active' };
  return { ...stored, apiVersion: 'iam.kapi.io/v1alpha2', kind: 'User', metadata: shownMetadata, status };
}

/**
 * A User as a workspace admin choosing whom to invite sees it (pure): its name, creation time and e-mail, nothing of
 * its state, groups, role, logins or annotations.
 */
export function userToInvite(stored: Raw): Raw {
  const metadata = stored?.metadata ?? {};
  const email = stored?.spec?.email;
  return {
    apiVersion: 'iam.kapi.io/v1alpha2',
    kind: 'User',
    metadata: {
      name: metadata.name,
      ...(typeof metadata.uid === 'string' && { uid: metadata.uid }),
      ...(typeof metadata.creationTimestamp === 'string' && { creationTimestamp: metadata.creationTimestamp }),
    },
    spec: typeof email === 'string' ? { email } : {},
  };
}
