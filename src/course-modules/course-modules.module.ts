import { Module } from '@nestjs/common';

/** Modules API with personnel and students (SPEC §4). */
@Module({})
export class CourseModulesModule {}
