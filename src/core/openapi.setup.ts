import { type INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { namedSchemas } from './openapi.js';
import './openapi.schemas.js';

export const DOCS_PATH = '/api/docs';
export const DOCS_JSON_PATH = '/api/docs-json';

/** Builds the OpenAPI 3 document from the decorators of every controller. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Module Administration Service')
    .setDescription(
      'Manage course modules and the people in them. Every JSON response is an envelope ' +
        '`{ success, data, message }`. Sign in with `POST /api/auth/login`, then press **Authorize** and ' +
        'paste the token.',
    )
    .setVersion('1.0.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
    .addTag('Auth', 'Sign in, the current user, password change')
    .addTag('Modules', 'Course modules')
    .addTag('Personnel', 'Lecturers, assistant lecturers and tutors of a module')
    .addTag('Students', 'The students of a module')
    .addTag('Users', 'User administration and avatars')
    .addTag('Health', 'Probes for Kubernetes')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ...namedSchemas },
  };
  return document;
}

/** Swagger UI at /api/docs and the JSON document at /api/docs-json, both public. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup(DOCS_PATH, app, () => buildOpenApiDocument(app), {
    useGlobalPrefix: false,
    jsonDocumentUrl: DOCS_JSON_PATH,
    yamlDocumentUrl: undefined,
    customSiteTitle: 'Module Administration Service API',
    swaggerOptions: { persistAuthorization: true, displayRequestDuration: true, tryItOutEnabled: false },
  });
}
