export const Role = { Scrape: "scrape", Catalog: "catalog" } as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLES: readonly Role[] = [Role.Scrape, Role.Catalog];
