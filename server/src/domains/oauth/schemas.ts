/** TypeBox schemas of the consent-step routes. */
import { Type } from '@sinclair/typebox';

const ClientLabels = Type.Object({
  client_id: Type.String(),
  client_name: Type.String({ description: 'client-supplied label (client_name, else software_id, else the client id); not verified' }),
  client_host: Type.Union([Type.String(), Type.Null()], { description: 'host of client_uri, else of the first redirect URI; client-supplied, not verified' }),
  verified: Type.Boolean({ description: 'always false: the labels are what the client said about itself' }),
});

const Person = Type.Object({ user_id: Type.String(), workspace_id: Type.String(), role: Type.String() });

const pendingFields = {
  client: ClientLabels,
  requested_scopes: Type.Array(Type.String()),
  grantable_scopes: Type.Array(Type.String(), { description: "requested scopes of this service that the person's role holds" }),
  project_id: Type.Union([Type.String(), Type.Null()], { description: 'the project the request is limited to (parameter project_id), if any' }),
  person: Person,
  expires_at: Type.String({ format: 'date-time' }),
};

export const InteractionParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 200 }) });
export const InteractionResponse = Type.Object({ uid: Type.String(), ...pendingFields });
export const DeviceRequestResponse = Type.Object(pendingFields);

const approveFields = {
  scopes: Type.Optional(Type.Array(Type.String(), { minItems: 1, description: 'grant only these (a subset of the requested scopes)' })),
  project_id: Type.Optional(Type.String({ minLength: 1, description: 'limit the approval to this project (when the request named none)' })),
};

export const ApproveBody = Type.Object(approveFields, { additionalProperties: false });
export const UserCodeBody = Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });
export const DeviceApproveBody = Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }), ...approveFields }, { additionalProperties: false });
export const DeviceQuery = Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false });

export const ApprovedResponse = Type.Object({
  redirect_to: Type.String({ description: 'where the browser continues the authorization (the library resumes it and redirects to the client)' }),
  connection_id: Type.String({ description: 'the agent approval that was created' }),
  scopes: Type.Array(Type.String()),
});
export const DeniedResponse = Type.Object({ redirect_to: Type.String() });
export const DeviceApprovedResponse = Type.Object({ connection_id: Type.String(), scopes: Type.Array(Type.String()) });
