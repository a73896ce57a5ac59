;;; claude-bridge-client.el --- JSON-RPC connection to claude-bridge  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The client part of claude-bridge.el: one `claude-bridge' process per
;; Emacs, spoken to with the built-in jsonrpc.el over a pipe.  It starts
;; the bridge on first use, initializes it (declaring that Emacs answers
;; permission prompts), queues calls made meanwhile, and hands
;; notifications and bridge->client requests to functions the rest of
;; the package installs.  No UI code lives here.  A request whose
;; answer cannot come because the bridge ended fails with the
;; client-side ConnectionClosed code of the protocol.
;;
;; jsonrpc.el 1.0.14 (Emacs 28) pitfalls handled here:
;; - `jsonrpc-request' always times out (10 s by default, nil means the
;;   default), so every call that may run long is asynchronous with
;;   `:timeout' nil;
;; - params are always sent (nil is JSON null), so a call without params
;;   sends an empty object, which must be a hash table;
;; - every message is pretty-printed into an events buffer unless its
;;   scrollback size is 0, which would make streaming crawl.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'claude-bridge-protocol)

(defgroup claude-bridge nil
  "Chat with Claude Code through the claude-bridge JSON-RPC bridge."
  :group 'tools
  :prefix "claude-bridge-")

(defcustom claude-bridge-command '("claude-bridge")
  "The command that starts the bridge, as a list: program and arguments.
For example \\='(\"claude-bridge\" \"serve\" \"--claude-path\" \"/opt/claude\")."
  :type '(repeat string))

(defcustom claude-bridge-permission-timeout nil
  "Seconds a permission prompt waits for an answer before it is denied.
nil waits as long as it takes."
  :type '(choice (const :tag "Wait forever" nil) number))

(defcustom claude-bridge-warm-pool 1
"Spare Claude processes the bridge keeps ready per project and settings.
A new chat takes a spare at once instead of waiting for the CLI to
start; the bridge then warms the next one.  0 turns the pool off.
Read when the bridge starts (\\[claude-bridge-shutdown] restarts it)."
  :type '(choice (const :tag "No warm pool" 0) natnum))

(defcustom claude-bridge-events-buffer-size 0
  "Size of the JSON-RPC events log buffer; 0 disables it, nil is unlimited.
Logging every message slows streaming down a lot: enable it to debug only."
  :type '(choice (const :tag "Unlimited" nil) integer))

(defvar claude-bridge-client-notification-function #'ignore
  "Function of (METHOD PARAMS) called for each notification of the bridge.")

(defvar claude-bridge-client-request-function
  (lambda (_method _params)
    (jsonrpc-error :code claude-bridge-protocol-error-method-not-found
                   :message "not handled"))
  "Function of (METHOD PARAMS) that answers a request of the bridge.
It returns the result, or signals `jsonrpc-error'.")

(defvar claude-bridge-client-exit-function #'ignore
  "Function of (MESSAGE) called when the bridge process has ended.")

(defvar claude-bridge-client--connection nil
  "The live connection to the bridge (a jsonrpc.el process connection), or nil.")

(defvar claude-bridge-client--ready nil
  "Non-nil once `initialize' was answered on the current connection.")

(defvar claude-bridge-client--queue nil
  "Thunks waiting for the connection to be initialized, newest first.")

(defvar claude-bridge-client--init-error nil
  "Why the last bridge failed to initialize, or nil.")

(defvar claude-bridge-client-server-info nil
  "The `initialize' result of the current bridge (a plist).")

(defconst claude-bridge-client-empty-object (make-hash-table)
  "An empty JSON object (nil would be encoded as null).")

(defun claude-bridge-client-live-p ()
  "Return non-nil when the bridge process is running."
  (and claude-bridge-client--connection
       (jsonrpc-running-p claude-bridge-client--connection)))

(defun claude-bridge-client-pid ()
  "Return the bridge's process id, or nil when it does not run."
  (when (claude-bridge-client-live-p)
    (process-id (jsonrpc--process claude-bridge-client--connection))))

(defun claude-bridge-client--on-shutdown (conn)
  "Forget CONN, the connection whose bridge ended, and report it."
  (when (eq conn claude-bridge-client--connection)
    (let* ((proc (jsonrpc--process conn))
           (status (process-exit-status proc))
           (msg (format "claude-bridge exited (%s %s)"
                        (process-status proc) status))
           (queue claude-bridge-client--queue))
      (setq claude-bridge-client--connection nil
            claude-bridge-client--ready nil
            claude-bridge-client--queue nil)
      (remove-hook 'kill-emacs-hook #'claude-bridge-client-shutdown)
      (dolist (thunk queue)
        (ignore-errors (funcall thunk msg)))
      (funcall claude-bridge-client-exit-function msg))))

(defun claude-bridge-client--start ()
  "Start the bridge process and send `initialize'."
  (when (null claude-bridge-command)
    (user-error "`claude-bridge-command' is empty"))
  (let* ((name "claude-bridge")
         (default-directory (expand-file-name "~/"))
         (conn
          (make-instance
           'jsonrpc-process-connection
           :name name
           :events-buffer-scrollback-size claude-bridge-events-buffer-size
           :notification-dispatcher
           (lambda (_conn method params)
             (funcall claude-bridge-client-notification-function method params))
           :request-dispatcher
           (lambda (_conn method params)
             (funcall claude-bridge-client-request-function method params))
           :on-shutdown #'claude-bridge-client--on-shutdown
           :process
           (lambda ()
             (make-process
              :name name
              :command claude-bridge-command
              :connection-type 'pipe
              :coding 'utf-8-emacs-unix
              :noquery t
              :stderr (get-buffer-create (format "*%s stderr*" name)))))))
    (setq claude-bridge-client--connection conn
          claude-bridge-client--ready nil
          claude-bridge-client--init-error nil)
    ;; Quitting Emacs ends the bridge, and with it every Claude process.
    (add-hook 'kill-emacs-hook #'claude-bridge-client-shutdown)
    (jsonrpc-async-request
     conn :initialize
     (list :processId (emacs-pid)
           :clientInfo (list :name "claude-bridge.el" :version "0.1.0")
           :capabilities claude-bridge-client-empty-object
           :initializationOptions
           (append (list :permissions t)
                   (when claude-bridge-permission-timeout
                     (list :permissionTimeout claude-bridge-permission-timeout))
                   (when (and (natnump claude-bridge-warm-pool)
                              (> claude-bridge-warm-pool 0))
                     (list :warmPool (list :size claude-bridge-warm-pool)))))
     :timeout nil
     :success-fn
     (lambda (result)
       (when (eq conn claude-bridge-client--connection)
         (setq claude-bridge-client-server-info result
               claude-bridge-client--ready t)
         (jsonrpc-notify conn :initialized claude-bridge-client-empty-object)
         (let ((queue (reverse claude-bridge-client--queue)))
           (setq claude-bridge-client--queue nil)
           (dolist (thunk queue) (funcall thunk nil)))))
     :error-fn
     (lambda (err)
       (setq claude-bridge-client--init-error (plist-get err :message))))
    conn))

(defun claude-bridge-client-connection ()
  "Return the connection to the bridge, starting the bridge if needed."
  (unless (claude-bridge-client-live-p)
    (claude-bridge-client--start))
  claude-bridge-client--connection)

(defun claude-bridge-client--when-ready (thunk)
  "Call THUNK with nil once the bridge is initialized.
If the bridge ends first, THUNK is called with a message saying so."
  (claude-bridge-client-connection)
  (if claude-bridge-client--ready
      (funcall thunk nil)
    (push thunk claude-bridge-client--queue)))

(defun claude-bridge-client-error-message (err)
  "Return the message of ERR, a JSON-RPC error plist."
  (or (plist-get err :message) (format "%S" err)))

(defun claude-bridge-client--connection-closed (err)
  "Return ERR, with jsonrpc.el's \"Server died\" as ConnectionClosed."
  (if (eql (plist-get err :code) -1)
      (list :code claude-bridge-protocol-error-connection-closed
            :message (or (plist-get err :message) "the bridge exited"))
    err))

(cl-defun claude-bridge-client-call (method params &key on-result on-error (start t))
  "Call METHOD with PARAMS on the bridge, asynchronously, without timeout.
PARAMS is a plist (nil sends an empty object).  ON-RESULT is called
with the result, ON-ERROR with the JSON-RPC error plist; a bridge that
ended fails the call with `claude-bridge-protocol-error-connection-closed'.
Without ON-ERROR the error is shown as a message.  When START is nil
and no bridge runs, the call fails that way at once instead of
starting one.  Return nil."
  (let ((on-error (or on-error
                      (lambda (err)
                        (message "claude-bridge: %s failed: %s" method
                                 (claude-bridge-client-error-message err))))))
    (if (and (not start) (not (claude-bridge-client-live-p)))
        (funcall on-error (list :code claude-bridge-protocol-error-connection-closed
                                :message "the bridge is not running"))
      (claude-bridge-client--when-ready
       (lambda (failure)
         (if failure
             (funcall on-error
                      (list :code claude-bridge-protocol-error-connection-closed
                            :message failure))
           (jsonrpc-async-request
            claude-bridge-client--connection (intern method)
            (or params claude-bridge-client-empty-object)
            :timeout nil
            :success-fn (or on-result #'ignore)
            :error-fn (lambda (err)
                        (funcall on-error
                                 (claude-bridge-client--connection-closed err))))))))
    nil))

(defun claude-bridge-client-call-sync (method params &optional timeout)
  "Call METHOD with PARAMS and wait for its result, at most TIMEOUT seconds.
For short requests only.  Signal `jsonrpc-error' or `user-error' on
failure."
  (let* ((done nil) result failure
         (deadline (+ (float-time) (or timeout 30))))
    (claude-bridge-client-call
     method params
     :on-result (lambda (r) (setq result r done t))
     :on-error (lambda (e) (setq failure e done t)))
    (while (and (not done) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (cond ((not done) (user-error "claude-bridge: %s timed out" method))
          (failure (signal 'jsonrpc-error
                           (list (claude-bridge-client-error-message failure)
                                 (cons 'jsonrpc-error-code
                                       (plist-get failure :code))
                                 (cons 'jsonrpc-error-message
                                       (plist-get failure :message)))))
          (t result))))

(defun claude-bridge-client--running-p (proc)
  "Return non-nil while PROC is running, asking the system rather than Emacs.
Emacs killed by a signal may not reap its children any more."
  (and (process-live-p proc)
       (let ((state (alist-get 'state (process-attributes (process-id proc)))))
         (and state (not (equal state "Z"))))))

(defun claude-bridge-client-shutdown (&optional wait)
  "Stop the bridge: close its input and wait up to WAIT seconds for it.
The bridge closes every session and reaps every CLI process when its
input ends; a bridge still running after WAIT (default 5) seconds is
sent SIGTERM, then killed."
  (when-let ((conn claude-bridge-client--connection))
    (let ((proc (jsonrpc--process conn))
          (deadline (+ (float-time) (or wait 5))))
      (setq claude-bridge-client--connection nil
            claude-bridge-client--ready nil
            claude-bridge-client--queue nil)
      (when (process-live-p proc)
        ;; Emacs 28 killed by a signal (SIGHUP when its terminal goes) spins
        ;; on the EOF of the stderr pipe when the bridge exits: drop that pipe.
        (when-let ((stderr (get-buffer-process (jsonrpc-stderr-buffer conn))))
          (delete-process stderr))
        (ignore-errors (process-send-eof proc))
        (while (and (claude-bridge-client--running-p proc) (< (float-time) deadline))
          (accept-process-output proc 0.05))
        (when (claude-bridge-client--running-p proc)
          (ignore-errors (signal-process proc 'term))
          (setq deadline (+ (float-time) 2))
          (while (and (claude-bridge-client--running-p proc) (< (float-time) deadline))
            (accept-process-output proc 0.05)))
        (when (process-live-p proc)
          (delete-process proc))))
    (remove-hook 'kill-emacs-hook #'claude-bridge-client-shutdown)))

(provide 'claude-bridge-client)
;;; claude-bridge-client.el ends here
