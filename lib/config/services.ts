/** The four services of the platform, in the order the specification presents them. */
export const SERVICES = ['trust', 'registry', 'issuer', 'archive'] as const;
export type ServiceName = (typeof SERVICES)[number];

export function isServiceName(value: string): value is ServiceName {
  return (SERVICES as readonly string[]).includes(value);
}
