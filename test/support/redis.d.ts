export function probeTestRedis(): Promise<{ url: string; missing: string | undefined }>;
export function uniqueRedisPrefix(name: string): string;
