import { ConfigError, loadConfig } from './app-config.js';

describe('loadConfig: Redis and S3 settings', () => {
  it('leaves Redis and S3 off by default', () => {
    const config = loadConfig({});
    expect(config.redisUrl).toBeUndefined();
    expect(config.redisKeyPrefix).toBe('mas:');
    expect(config.s3).toBeUndefined();
  });

  it('reads them when set, empty values counting as unset', () => {
    const config = loadConfig({
      REDIS_URL: 'rediss://cache.example.edu:6380/2',
      REDIS_KEY_PREFIX: 'prod:',
      STORAGE_S3_BUCKET: 'mas-files',
      STORAGE_S3_ENDPOINT: 'https://s3.example.edu:9000',
      STORAGE_S3_REGION: 'eu-west-1',
      STORAGE_S3_FORCE_PATH_STYLE: 'true',
    });
    expect(config.redisUrl).toBe('rediss://cache.example.edu:6380/2');
    expect(config.redisKeyPrefix).toBe('prod:');
    expect(config.s3).toEqual({
      bucket: 'mas-files',
      endpoint: 'https://s3.example.edu:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
    });
    expect(loadConfig({ STORAGE_S3_BUCKET: 'b-1', STORAGE_S3_REGION: '' }).s3).toEqual({
      bucket: 'b-1',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
    });
  });

  it.each([
    ['REDIS_URL', { REDIS_URL: 'http://cache:6379' }],
    ['REDIS_URL', { REDIS_URL: 'redis://has space' }],
    ['REDIS_KEY_PREFIX', { REDIS_KEY_PREFIX: 'a b' }],
    ['STORAGE_S3_BUCKET', { STORAGE_S3_BUCKET: 'Upper_Case' }],
    ['STORAGE_S3_ENDPOINT', { STORAGE_S3_BUCKET: 'ok-bucket', STORAGE_S3_ENDPOINT: 'ftp://x' }],
    ['STORAGE_S3_REGION', { STORAGE_S3_BUCKET: 'ok-bucket', STORAGE_S3_REGION: 'EU WEST' }],
    ['STORAGE_S3_FORCE_PATH_STYLE', { STORAGE_S3_BUCKET: 'ok-bucket', STORAGE_S3_FORCE_PATH_STYLE: 'maybe' }],
    ['STORAGE_S3_ENDPOINT', { STORAGE_S3_ENDPOINT: 'https://s3.example.edu' }],
  ])('refuses a bad %s', (variable, env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(`Invalid configuration: ${variable}`);
  });
});
