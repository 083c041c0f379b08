import type { Transport, CallOptions } from './transport.js';
import type { BodyOf, QueryOf, ResponseOf } from './operations.js';
import {
  createComputerTool,
  type AnthropicComputerTool,
  type ComputerToolOptions,
  type OpenAIComputerTool,
} from './computer-tool/index.js';

export type Claim = ResponseOf<'getClaim'>;

/**
 * ClaimHandle is a claim plus the calls that drive its sandbox. `await using claim = await
 * cubicle.claims.create('default')` releases it when the scope ends (Symbol.asyncDispose);
 * releasing twice is harmless. `data` is the claim as last seen by this handle.
 */
export class ClaimHandle {
  data: Claim;
  readonly #t: Transport;

  constructor(transport: Transport, data: Claim) {
    this.#t = transport;
    this.data = data;
  }

  get id(): string {
    return this.data.id;
  }

  #p() {
    return { id: this.data.id };
  }

  /** refresh reads the claim again (e.g. a pending claim becoming active). */
  async refresh(options?: CallOptions): Promise<Claim> {
    return (this.data = await this.#t.call('getClaim', { params: this.#p() }, options));
  }

  /** waitUntilActive polls a pending claim until it holds a sandbox (or ends). */
  async waitUntilActive(options: CallOptions & { intervalMs?: number } = {}): Promise<Claim> {
    while (this.data.status === 'pending') {
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 500));
      options.signal?.throwIfAborted();
      await this.refresh(options);
    }
    return this.data;
  }

  async heartbeat(options?: CallOptions): Promise<Claim> {
    return (this.data = await this.#t.call('heartbeatClaim', { params: this.#p() }, options));
  }

  /** extend sets the TTL from now, capped by the claim's maximum lifetime. */
  async extend(ttlSeconds: number, options?: CallOptions): Promise<Claim> {
    const body = { ttl_seconds: ttlSeconds } as BodyOf<'updateClaim'>;
    return (this.data = await this.#t.call('updateClaim', { params: this.#p(), body }, options));
  }

  async release(options?: CallOptions): Promise<Claim> {
    return (this.data = await this.#t.call('releaseClaim', { params: this.#p() }, options));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.data.status === 'released') return;
    await this.release();
  }

  observe(body: BodyOf<'observeClaim'> = {} as BodyOf<'observeClaim'>, options?: CallOptions) {
    return this.#t.call('observeClaim', { params: this.#p(), body }, options);
  }

  /** act runs an element action (click, type, … on an element token or locator). */
  act(body: BodyOf<'actClaim'>, options?: CallOptions) {
    return this.#t.call('actClaim', { params: this.#p(), body }, options);
  }

  /** input sends pixel-level input (coordinates on the latest screenshot, keys). */
  input(body: BodyOf<'inputClaim'>, options?: CallOptions) {
    return this.#t.call('inputClaim', { params: this.#p(), body }, options);
  }

  verify(body: BodyOf<'verifyClaim'>, options?: CallOptions) {
    return this.#t.call('verifyClaim', { params: this.#p(), body }, options);
  }

  /**
   * screenshot returns the screen, or one window (`window_id`), as PNG bytes (GET …/screenshot),
   * as Python's `claim.screenshot()` does: the file a person or a vision model looks at.
   */
  async screenshot(
    query: QueryOf<'getClaimScreenshot'> = {},
    options: CallOptions = {},
  ): Promise<Uint8Array> {
    const response = await this.#t.send(
      'getClaimScreenshot',
      { params: this.#p(), query },
      options,
      'image/png',
    );
    return new Uint8Array(await response.arrayBuffer());
  }

  /**
   * screenshotImage is the JSON form of POST …/screenshot (Python: `screenshot_image`): the image
   * as base64 with its `screenshot_id` and pixel mapping, which pixel `input` refers to.
   */
  screenshotImage(
    body: BodyOf<'screenshotClaim'> = {} as BodyOf<'screenshotClaim'>,
    options?: CallOptions,
  ) {
    return this.#t.call('screenshotClaim', { params: this.#p(), body }, options);
  }

  /** shell runs a command (`{ command }`, through sh) or an argv and returns its output. */
  shell(body: BodyOf<'runClaimShell'>, options?: CallOptions) {
    return this.#t.call('runClaimShell', { params: this.#p(), body }, options);
  }

  /** actionScreenshot returns a kept window screenshot (PNG bytes) an action quoted. */
  async actionScreenshot(screenshotId: string, options: CallOptions = {}): Promise<Uint8Array> {
    const response = await this.#t.send(
      'getClaimActionScreenshot',
      { params: { ...this.#p(), screenshot_id: screenshotId } },
      options,
      'image/png',
    );
    return new Uint8Array(await response.arrayBuffer());
  }

  /** viewerConnections pages through the claim's viewer streams, oldest first. */
  viewerConnections(options?: CallOptions) {
    return this.#t.paginate('listClaimViewerConnections', { params: this.#p() }, options);
  }

  /** actions pages through the claim's recorded actions, newest first. */
  actions(options?: CallOptions) {
    return this.#t.paginate('listClaimActions', { params: this.#p() }, options);
  }

  readonly files = {
    read: (body: BodyOf<'readClaimFile'>, options?: CallOptions) =>
      this.#t.call('readClaimFile', { params: this.#p(), body }, options),
    write: (body: BodyOf<'writeClaimFile'>, options?: CallOptions) =>
      this.#t.call('writeClaimFile', { params: this.#p(), body }, options),
    list: (body: BodyOf<'listClaimFiles'>, options?: CallOptions) =>
      this.#t.call('listClaimFiles', { params: this.#p(), body }, options),
    stat: (body: BodyOf<'statClaimFile'>, options?: CallOptions) =>
      this.#t.call('statClaimFile', { params: this.#p(), body }, options),
    delete: (body: BodyOf<'deleteClaimFile'>, options?: CallOptions) =>
      this.#t.call('deleteClaimFile', { params: this.#p(), body }, options),
  };

  readonly windows = {
    list: (options?: CallOptions) =>
      this.#t.call('listClaimWindows', { params: this.#p() }, options),
    launch: (body: BodyOf<'launchClaimWindow'>, options?: CallOptions) =>
      this.#t.call('launchClaimWindow', { params: this.#p(), body }, options),
    close: (body: BodyOf<'closeClaimWindow'>, options?: CallOptions) =>
      this.#t.call('closeClaimWindow', { params: this.#p(), body }, options),
  };

  /** viewerTicket mints a ticket for this claim's desktop (`viewer_url` is the page to open). */
  viewerTicket(
    body: BodyOf<'createViewerTicket'> = {} as BodyOf<'createViewerTicket'>,
    options?: CallOptions,
  ) {
    return this.#t.call('createViewerTicket', { params: this.#p(), body }, options);
  }

  /**
   * computerTool returns a computer-use tool for Anthropic's `computer` tool or OpenAI's
   * computer-use actions: its `definition` (display size from a first screenshot) to pass to the
   * model, and `execute(action)`, which drives this claim's display and answers in that shape.
   */
  computerTool(kind: 'anthropic', options?: ComputerToolOptions): Promise<AnthropicComputerTool>;
  computerTool(kind: 'openai', options?: ComputerToolOptions): Promise<OpenAIComputerTool>;
  computerTool(
    kind: 'anthropic' | 'openai',
    options?: ComputerToolOptions,
  ): Promise<AnthropicComputerTool | OpenAIComputerTool> {
    return kind === 'anthropic'
      ? createComputerTool(this, kind, options)
      : createComputerTool(this, kind, options);
  }

  /**
   * requestHandoff hands the desktop to a human (a login, a CAPTCHA, a decision the agent must not
   * take): until it comes back, this claim's driving calls are 409 `handoff_active`. The answer
   * carries `control.viewer_url`, shown once: the page where the human takes over (the dashboard's
   * "Take over" banner works too). Wait for the return with `waitForHandoff(handoff.id)`.
   */
  requestHandoff(body: BodyOf<'requestHandoff'>, options?: CallOptions) {
    return this.#t.call('requestHandoff', { params: this.#p(), body }, options);
  }

  /** returnHandoff gives the desktop back to the agent with a note (the human's side). */
  returnHandoff(
    handoffId: string,
    body: BodyOf<'returnHandoff'> = {} as BodyOf<'returnHandoff'>,
    options?: CallOptions,
  ) {
    const params = { ...this.#p(), handoff_id: handoffId };
    return this.#t.call('returnHandoff', { params, body }, options);
  }

  /** handoff reads one handoff: its state, and the human's note once returned. */
  handoff(handoffId: string, options?: CallOptions) {
    const params = { ...this.#p(), handoff_id: handoffId };
    return this.#t.call('getHandoff', { params }, options);
  }

  /** handoffs pages through the claim's handoffs, newest first (`{ state: 'active' }` filters). */
  handoffs(query: QueryOf<'listHandoffs'> = {} as QueryOf<'listHandoffs'>, options?: CallOptions) {
    return this.#t.paginate('listHandoffs', { params: this.#p(), query }, options);
  }

  /**
   * waitForHandoff polls a handoff until it is no longer active (returned, lease expired, or the
   * claim ended) and answers it: `note` is what the human left for the agent.
   */
  async waitForHandoff(
    handoffId: string,
    options: CallOptions & { intervalMs?: number } = {},
  ): Promise<ResponseOf<'getHandoff'>> {
    for (;;) {
      const handoff = await this.handoff(handoffId, options);
      if (handoff.state !== 'active') return handoff;
      await new Promise((r) => setTimeout(r, options.intervalMs ?? 1000));
      options.signal?.throwIfAborted();
    }
  }

  /** egress reads the claim's egress policy as it applies now (the pool's, narrowed by the claim). */
  egress(options?: CallOptions) {
    return this.#t.call('getClaimEgress', { params: this.#p() }, options);
  }

  /** egressEvents pages through the claim's egress events (denied connections), newest first. */
  egressEvents(options?: CallOptions) {
    return this.#t.paginate('listEgressEvents', { params: this.#p() }, options);
  }

  /** egressEventStream opens the live Server-Sent Events stream of egress events (the raw answer). */
  egressEventStream(options: CallOptions = {}): Promise<Response> {
    return this.#t.send('streamEgressEvents', { params: this.#p() }, options, 'text/event-stream');
  }

  /** mcpToken mints a claim-scoped MCP token (`mcp_url` and `token`, shown once). */
  mcpToken(body: BodyOf<'createMcpToken'> = {} as BodyOf<'createMcpToken'>, options?: CallOptions) {
    return this.#t.call('createMcpToken', { params: this.#p(), body }, options);
  }

  /** mcpTokens pages through the claim's MCP tokens (never the token strings). */
  mcpTokens(options?: CallOptions) {
    return this.#t.paginate('listMcpTokens', { params: this.#p() }, options);
  }

  /** revokeMcpToken stops an MCP token at once. */
  revokeMcpToken(tokenId: string, options?: CallOptions) {
    return this.#t.call('revokeMcpToken', { params: { token_id: tokenId } }, options);
  }

  /**
   * pause freezes the claim's desktop (no CPU while paused; paused time counts toward the hard
   * maximum, not the idle timeout). Any driving call resumes it; Pods answer 409
   * `not_supported_by_backend`.
   */
  pause(options?: CallOptions) {
    return this.#t.call('pauseClaim', { params: this.#p() }, options);
  }

  /** resume thaws a paused claim (a no-op on a running one). */
  resume(options?: CallOptions) {
    return this.#t.call('resumeClaim', { params: this.#p() }, options);
  }

  /** saveProfile saves the claim's profile now (changed files only), as release also does. */
  saveProfile(options?: CallOptions) {
    return this.#t.call('saveClaimProfile', { params: this.#p() }, options);
  }

  /** snapshot stores the claim's home (or `paths` in it); fork it with `claims.create(pool, {from_snapshot})`. */
  snapshot(body: BodyOf<'createSnapshot'> = {} as BodyOf<'createSnapshot'>, options?: CallOptions) {
    return this.#t.call('createSnapshot', { params: this.#p(), body }, options);
  }

  /** recording describes the claim's video: state, segments, duration, size and its URLs. */
  recording(options?: CallOptions) {
    return this.#t.call('getClaimRecording', { params: this.#p() }, options);
  }

  /**
   * recordingMedia fetches the video (fragmented MP4) or, with `range` (`bytes=0-1023`), a part
   * of it; the raw answer, so a caller can stream its body to a file.
   */
  recordingMedia(range?: string, options: CallOptions = {}): Promise<Response> {
    const headers = range ? { range } : undefined;
    return this.#t.send(
      'getClaimRecordingMedia',
      { params: this.#p(), headers },
      options,
      'video/mp4',
    );
  }

  /** timeline pages through the claim's steps, runs, viewers and lifecycle on the video's clock. */
  timeline(options?: CallOptions) {
    return this.#t.paginate('getClaimTimeline', { params: this.#p() }, options);
  }

  /** replayLink mints an expiring, revocable, read-only link to the claim's replay (shown once). */
  replayLink(body: BodyOf<'createReplayLink'>, options?: CallOptions) {
    return this.#t.call('createReplayLink', { params: this.#p(), body }, options);
  }

  /** replayLinks pages through the claim's replay links (never the link tokens). */
  replayLinks(options?: CallOptions) {
    return this.#t.paginate('listReplayLinks', { params: this.#p() }, options);
  }

  /** revokeReplayLink stops a replay link at once. */
  revokeReplayLink(linkId: string, options?: CallOptions) {
    return this.#t.call('revokeReplayLink', { params: { link_id: linkId } }, options);
  }

  /** run starts a program in the sandbox; follow it with `cubicle.runs.events(run.id)`. */
  run(body: BodyOf<'createRun'>, options?: CallOptions) {
    return this.#t.call('createRun', { params: this.#p(), body }, options);
  }
}
