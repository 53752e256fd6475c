/**
 * Development-only secrets. The service refuses them with NODE_ENV=production (config.ts); the
 * back office's "use the development token" button signs with the JWT one, so it works only
 * against a service that runs on it.
 */
export const DEV_JWT_SECRET = "dev-only-jwt-secret-change-me-0123456789abcdef";
export const DEV_API_KEY_SECRET = "dev-only-api-key-secret-change-me-0123456789";
