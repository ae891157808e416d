/**
 * The bodies the OpenAPI document shows for creating a REST API connection and an endpoint of each
 * pagination type (docs/rest-api.md, docs/pagination.md). test/http/openapi-examples.test.ts checks each
 * against its schema and creates it on a service, so they stay valid.
 */
import type { BodyExamples } from '../http/openapi.js';

export const CONNECTION_EXAMPLES: BodyExamples = {
  oauth2ClientCredentials: {
    summary: 'An API behind OAuth 2.0 client credentials',
    value: {
      code: 'crm',
      baseUrl: 'https://api.example.com/v1',
      authType: 'oauth2ClientCredentials',
      tokenUrl: 'https://login.example.com/oauth2/token',
      clientId: 'ifw',
      clientSecret: 'client-secret-from-the-identity-provider',
      scope: 'api.read',
      headers: { Accept: 'application/json' },
    },
  },
  apiKey: {
    summary: 'An API key in a header',
    value: {
      code: 'shop',
      baseUrl: 'https://shop.example.com/api',
      authType: 'apiKey',
      apiKeyIn: 'header',
      apiKeyName: 'X-Api-Key',
      apiKey: 'key-from-the-shop',
    },
  },
};

export const ENDPOINT_EXAMPLES: BodyExamples = {
  none: {
    summary: 'One request, no pagination: the records are the response root',
    value: {
      code: 'countries',
      connectionCode: 'crm',
      path: '/countries',
      integrationSortingOrder: 10,
      paginationType: 'none',
      responseDataPath: '',
    },
  },
  nextLink: {
    summary: 'Next Link: each page names the URL of the next (OData @odata.nextLink)',
    value: {
      code: 'customers-next',
      connectionCode: 'crm',
      path: '/customers',
      integrationSortingOrder: 10,
      paginationType: 'nextLink',
      nextLinkJsonPath: '@odata.nextLink',
      responseDataPath: 'value',
      maxPages: 500,
    },
  },
  pageNumber: {
    summary: 'Page Number: ?page=1, 2, … until a page has fewer records than Page Size',
    value: {
      code: 'customers-pages',
      connectionCode: 'crm',
      path: '/customers',
      integrationSortingOrder: 10,
      paginationType: 'pageNumber',
      pageParameterName: 'page',
      pageSize: 50,
      responseDataPath: 'data',
    },
  },
  offsetLimit: {
    summary: 'Offset/Limit: ?offset=0&limit=100, then offset=100, … scheduled every hour',
    value: {
      code: 'customers',
      connectionCode: 'crm',
      path: '/customers',
      integrationSortingOrder: 10,
      paginationType: 'offsetLimit',
      offsetParameterName: 'offset',
      limitParameterName: 'limit',
      pageSize: 100,
      maxPages: 150,
      responseDataPath: 'data',
      scheduleSeconds: 3600,
    },
  },
};
