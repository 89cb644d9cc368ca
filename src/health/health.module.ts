import { Module } from '@nestjs/common';
import { DatabaseProbe } from '../database/database-probe.js';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';

@Module({ controllers: [HealthController], providers: [HealthService, DatabaseProbe] })
export class HealthModule {}
