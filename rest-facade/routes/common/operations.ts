/** The GraphQL documents of the routes every service has, each on the service's root field. */
import type { ServiceName } from '../../../lib/config/services.js';

/** A service without a keyring path publishes its keys in its discovery document, so its signed health can be checked. */
export const discovery = (service: ServiceName, keyring: boolean) => `query Discovery { ${service} { discovery${keyring ? '' : ' keyring'} } }`;

export const health = (service: ServiceName) => `query Health { ${service} { health } }`;

export const adminLog = (service: ServiceName) => `query AdminLog($limit: Int, $before: String) {
  ${service} { adminLog(first: $limit, after: $before) { entries: nodes { id at actor role operator action target outcome detail } pageInfo { endCursor } } }
}`;

export const keyring = (service: ServiceName) => `query Keyring { ${service} { keyring } }`;
