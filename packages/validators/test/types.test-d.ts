import type { CreateBrowserRequestBody, ListProjectsQuery, ManagedAuth, Project, Region } from "@browser-service/types";
import { describe, expectTypeOf, it } from "vitest";
import { assertRegion, isManagedAuth, operationValidators, type ValidationIssue, type ValidationResult, validateManagedAuth } from "../src/index.js";

describe("types", () => {
  it("types a valid result's value with the schema's type from @browser-service/types", () => {
    const result = validateManagedAuth({});
    if (result.ok) expectTypeOf(result.value).toEqualTypeOf<ManagedAuth>();
    else expectTypeOf(result.errors).toEqualTypeOf<readonly ValidationIssue[]>();
  });

  it("narrows with the guard and the assertion", () => {
    const value: unknown = "us-east";
    if (isManagedAuth(value)) expectTypeOf(value).toEqualTypeOf<ManagedAuth>();
    assertRegion(value);
    expectTypeOf(value).toEqualTypeOf<Region>();
  });

  it("types operation validators by operation", () => {
    expectTypeOf(operationValidators.listProjects.query).returns.toEqualTypeOf<ValidationResult<ListProjectsQuery>>();
    expectTypeOf(operationValidators.createBrowser.body).returns.toEqualTypeOf<ValidationResult<CreateBrowserRequestBody | undefined>>();
    expectTypeOf(operationValidators.getProject.responses[200]).returns.toEqualTypeOf<ValidationResult<Project>>();
    expectTypeOf(operationValidators.getProject.headers).returns.toEqualTypeOf<ValidationResult<{ "x-service-project-id"?: string }>>();
    // Only the operation's own inputs and statuses are there.
    expectTypeOf(operationValidators.getProject).not.toHaveProperty("body");
    expectTypeOf(operationValidators.getProject.responses).not.toHaveProperty(201);
  });
});
