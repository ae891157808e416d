/**
 * `users('<name>')` and `applications('<client id>')`: the administration of who may call the
 * service (permission `administer`, held by SUPER). Passwords are write-only: answers never carry
 * them or their hashes. The rules live in `src/auth/accounts.ts`; this file only speaks HTTP.
 *
 * With the development token issuer switched on, its public keys are served at `/auth/dev/jwks.json`.
 */
import { Type } from 'typebox';
import type { Accounts } from './accounts.js';
import { DEV_JWKS_PATH, type DevIssuer } from '../auth/dev-issuer.js';
import { PERMISSION_SET_NAMES } from '../auth/permission-sets.js';
import { entitySet } from '../http/entity-set.js';
import type { RoutePlugin } from '../http/server.js';
import { Deleted, ErrorSchema, KeyParams, ODATA_BODY } from '../http/schemas.js';

export interface SecurityRouteDeps {
  readonly accounts: Accounts;
  readonly devIssuer?: DevIssuer | undefined;
}

const tags = ['Users and applications'];

const PermissionSets = Type.Array(Type.String(), {
  description: `Permission sets, any of ${PERMISSION_SET_NAMES.join(', ')}; the list replaces the current one; default none`,
  maxItems: 10,
});
const Password = Type.String({
  description: 'Write-only, never in an answer; 12 to 1024 characters, and at most 1024 bytes in UTF-8',
  maxLength: 4096,
});
const Issuer = Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
  description:
    "The issuer whose tokens name this client, exactly as in their 'iss'; the same client id at another issuer is refused. Default: the service's only issuer; required when it trusts several. null: not bound (accepted only while the service trusts one issuer)",
});
const Enabled = Type.Boolean({ description: 'Default true; a disabled account is refused' });
const DisplayName = Type.String({ maxLength: 200, description: 'At most 200 characters; default empty' });

const users = entitySet({
  name: 'users',
  key: 'userName',
  keyType: 'string',
  noun: 'user',
  item: Type.Object({
    userName: Type.String(),
    enabled: Type.Boolean(),
    permissionSets: Type.Array(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    passwordChangedAt: Type.String({ format: 'date-time' }),
  }),
});
const applications = entitySet({
  name: 'applications',
  key: 'clientId',
  keyType: 'string',
  noun: 'application',
  item: Type.Object({
    clientId: Type.String(),
    issuer: Type.Union([Type.String(), Type.Null()]),
    displayName: Type.String(),
    enabled: Type.Boolean(),
    permissionSets: Type.Array(Type.String()),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  }),
});

const NewUserBody = Type.Object(
  {
    userName: Type.String({
      maxLength: 64,
      description: "1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit; the key, cannot change",
    }),
    password: Password,
    permissionSets: Type.Optional(PermissionSets),
    enabled: Type.Optional(Enabled),
  },
  ODATA_BODY,
);
const UserPatchBody = Type.Object(
  { password: Type.Optional(Password), permissionSets: Type.Optional(PermissionSets), enabled: Type.Optional(Enabled) },
  ODATA_BODY,
);
const NewApplicationBody = Type.Object(
  {
    clientId: Type.String({
      maxLength: 200,
      description:
        "The client id tokens carry in azp, appid or client_id: 1 to 200 letters, digits, '.', '_', ':', '@' or '-', starting with a letter or digit; the key, cannot change",
    }),
    issuer: Type.Optional(Issuer),
    displayName: Type.Optional(DisplayName),
    permissionSets: Type.Optional(PermissionSets),
    enabled: Type.Optional(Enabled),
  },
  ODATA_BODY,
);
const ApplicationPatchBody = Type.Object(
  {
    issuer: Type.Optional(Issuer),
    displayName: Type.Optional(DisplayName),
    permissionSets: Type.Optional(PermissionSets),
    enabled: Type.Optional(Enabled),
  },
  ODATA_BODY,
);

export function securityRoutes(deps: SecurityRouteDeps): RoutePlugin {
  const { accounts, devIssuer } = deps;
  const userResponses = { 200: users.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };
  const applicationResponses = { 200: applications.Entity, 400: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema };
  const administerUsers = users.config('administer');
  const administerApplications = applications.config('administer');

  return (app) => {
    app.get(
      users.path,
      { config: administerUsers, schema: { summary: 'List service users', tags, response: { 200: users.List } } },
      async () => users.list(await accounts.listUsers()),
    );
    app.get(
      users.itemPath,
      { config: administerUsers, schema: { summary: 'Read a service user', tags, params: KeyParams, response: userResponses } },
      async (request) => users.entity(await accounts.getUser(users.key(request.params.key))),
    );
    app.post(
      users.path,
      {
        config: administerUsers,
        schema: {
          summary: 'Create a service user (Basic authentication)',
          tags,
          body: NewUserBody,
          response: { ...userResponses, 201: users.Entity },
        },
      },
      async (request, reply) => {
        const user = await accounts.createUser(request.body);
        return reply.status(201).header('location', users.url(user.userName)).send(users.entity(user));
      },
    );
    app.patch(
      users.itemPath,
      {
        config: administerUsers,
        schema: {
          summary: 'Change a user: password, permission sets, enabled',
          description: 'Refused (409) when it would leave no enabled user or application holding SUPER.',
          tags,
          params: KeyParams,
          body: UserPatchBody,
          response: userResponses,
        },
      },
      async (request) => users.entity(await accounts.changeUser(users.key(request.params.key), request.body)),
    );
    app.delete(
      users.itemPath,
      {
        config: administerUsers,
        schema: {
          summary: 'Delete a service user',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await accounts.deleteUser(users.key(request.params.key));
        return reply.status(204).send(null);
      },
    );

    app.get(
      applications.path,
      {
        config: administerApplications,
        schema: { summary: 'List registered OAuth client applications', tags, response: { 200: applications.List } },
      },
      async () => applications.list(await accounts.listApplications()),
    );
    app.get(
      applications.itemPath,
      {
        config: administerApplications,
        schema: { summary: 'Read a registered application', tags, params: KeyParams, response: applicationResponses },
      },
      async (request) => applications.entity(await accounts.getApplication(applications.key(request.params.key))),
    );
    app.post(
      applications.path,
      {
        config: administerApplications,
        schema: {
          summary: 'Register an OAuth client application',
          description: 'Bearer tokens are accepted only from registered, enabled applications, with the permission sets given here.',
          tags,
          body: NewApplicationBody,
          response: { ...applicationResponses, 201: applications.Entity },
        },
      },
      async (request, reply) => {
        const application = await accounts.createApplication(request.body);
        return reply.status(201).header('location', applications.url(application.clientId)).send(applications.entity(application));
      },
    );
    app.patch(
      applications.itemPath,
      {
        config: administerApplications,
        schema: {
          summary: 'Change an application: display name, permission sets, enabled',
          description: 'Refused (409) when it would leave no enabled user or application holding SUPER.',
          tags,
          params: KeyParams,
          body: ApplicationPatchBody,
          response: applicationResponses,
        },
      },
      async (request) => applications.entity(await accounts.changeApplication(applications.key(request.params.key), request.body)),
    );
    app.delete(
      applications.itemPath,
      {
        config: administerApplications,
        schema: {
          summary: 'Remove a registered application',
          tags,
          params: KeyParams,
          response: { 204: Deleted, 404: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (request, reply) => {
        await accounts.deleteApplication(applications.key(request.params.key));
        return reply.status(204).send(null);
      },
    );

    if (devIssuer !== undefined) {
      app.get(
        DEV_JWKS_PATH,
        {
          config: { permission: 'public' },
          schema: {
            summary: 'Public keys of the development token issuer (IFW_DEV_TOKEN_ISSUER)',
            tags,
            response: {
              200: Type.Object(
                { keys: Type.Array(Type.Object({}, { additionalProperties: true })) },
                { description: 'A JSON Web Key Set (RFC 7517)', additionalProperties: true },
              ),
            },
          },
        },
        () => devIssuer.jwks,
      );
    }
  };
}
