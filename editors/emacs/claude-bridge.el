;;; claude-bridge.el --- Chat with Claude Code through claude-bridge  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; Version: 0.2.0
;; Package-Requires: ((emacs "28.1"))
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes, convenience

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; Hold long conversations with Claude Code in Emacs.  Each chat buffer
;; is one warm `claude' process, served by the `claude-bridge' JSON-RPC
;; bridge (one bridge per Emacs, started on first use):
;;
;; - `claude-bridge-chat' opens the chat of the current project; type
;;   after the line at the bottom and press C-c C-c.  The reply streams
;;   in without freezing Emacs; thinking and tool calls are folded
;;   (TAB on one shows its input and result, RET visits its file,
;;   M-g n walks through them); each turn ends with its cost and the
;;   context window's use.
;; - Sending while Claude works adds the message to the running turn;
;;   C-c C-k interrupts the turn and keeps the process.
;; - Permission prompts are drawn in the chat and answered there, never
;;   read from the keyboard by surprise; the echo area says when one
;;   arrives.  Edits can be looked at (and changed) in ediff first.
;; - `claude-bridge-add' adds the region, a buffer or a file to the next
;;   prompt (context chips, removable); @ in the prompt completes the
;;   project's files and folders; images can be attached or pasted.
;; - `claude-bridge-menu' (C-c C-t) shows everything a chat can do.
;;
;; The package has the same parts as the other editors' plugins:
;; claude-bridge-client.el (the JSON-RPC connection), -model.el (each
;; chat as data), -view.el (the chat buffer), -permission.el (the
;; prompts) and -commands.el (the commands and the menu).  This file
;; holds the chats together: it starts their sessions, sends their
;; turns and routes what the bridge says to them.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'project)
(require 'claude-bridge-protocol)
(require 'claude-bridge-client)
(require 'claude-bridge-model)
(require 'claude-bridge-permission)
(require 'claude-bridge-view)

;;;; Options

(defcustom claude-bridge-model nil
  "Model of new sessions (an alias such as \"opus\" or an id); nil: the CLI's."
  :type '(choice (const :tag "The CLI's default" nil) string)
  :group 'claude-bridge)

(defcustom claude-bridge-permission-mode nil
  "Permission mode of new sessions; nil: the CLI's default."
  :type `(choice (const :tag "The CLI's default" nil)
                 ,@(mapcar (lambda (m) `(const :tag ,(format "%s: %s" (car m) (cdr m)) ,(car m)))
                           claude-bridge-protocol-permission-modes))
  :group 'claude-bridge)

(defcustom claude-bridge-create-params nil
  "More `session/create' params for new sessions, as a plist.
For example (:appendSystemPrompt \"Be terse.\" :effort \"high\")."
  :type 'plist
  :group 'claude-bridge)

;; A streaming turn conses a few kilobytes per event (jsonrpc.el's
;; parse, a temporary buffer per message); with the default threshold
;; Emacs collects garbage a dozen times a second during a fast stream,
;; and one collection is the longest pause the user feels.
(defcustom claude-bridge-streaming-gc-cons-threshold (* 64 1024 1024)
  "The `gc-cons-threshold' while a turn streams; nil leaves it alone.
When larger than the current threshold, it applies from the start of
a turn until no turn of any chat runs, then the previous value comes
back (unless something else changed it in between).  The garbage of
the stream is then collected once, after the turn."
  :type '(choice (const :tag "Leave gc-cons-threshold alone" nil) integer)
  :group 'claude-bridge)

(defcustom claude-bridge-turn-done-hook nil
  "Hook run when a turn ends, with the chat and the turn result.
The result is the `session/send' result plist (:text, :costUsd,
:interrupted...)."
  :type 'hook
  :group 'claude-bridge)

(defcustom claude-bridge-permission-functions nil
  "Functions that may answer a permission request before the chat asks.
Each is called with the chat and the request plist (:toolName,
:input, :suggestions...) and returns a decision plist such as
\(:behavior \"allow\") or (:behavior \"deny\" :message \"no\"), or nil
to leave the request to the next function and finally to the user."
  :type 'hook
  :group 'claude-bridge)

;;;; Chats

(defvar claude-bridge--sessions (make-hash-table :test #'equal)
  "Chats of this Emacs by bridge session id.")

(defvar claude-bridge--early-events (make-hash-table :test #'equal)
  "Events of sessions whose `session/create' answer has not come yet.")

(defun claude-bridge--chat-buffers ()
  "Return the live chat buffers."
  (cl-remove-if-not (lambda (b) (buffer-local-value 'claude-bridge--buffer-chat b))
                    (buffer-list)))

(defun claude-bridge-chats ()
  "Return the chats of this Emacs that have a buffer."
  (mapcar (lambda (b) (buffer-local-value 'claude-bridge--buffer-chat b))
          (claude-bridge--chat-buffers)))

(setq claude-bridge-view--all-chats-function #'claude-bridge-chats)

(defun claude-bridge--project-root (&optional directory)
  "Return the project root of DIRECTORY (default: `default-directory')."
  (let* ((dir (expand-file-name (or directory default-directory)))
         (project (project-current nil dir)))
    (file-name-as-directory
     (expand-file-name (if project (project-root project) dir)))))

(defun claude-bridge--live-p (chat)
  "Return non-nil when CHAT's process is usable."
  (and chat (memq (claude-bridge--chat-state chat) '(starting idle running))))

(defun claude-bridge--chat-name (chat)
  "Return the short name of CHAT: its project's folder."
  (file-name-nondirectory (directory-file-name (claude-bridge--chat-cwd chat))))

(defun claude-bridge--project-buffers (root)
  "Return the chat buffers of ROOT, those with a live session first."
  (let ((mine (cl-remove-if-not
               (lambda (b) (equal (claude-bridge--chat-cwd
                                   (buffer-local-value 'claude-bridge--buffer-chat b))
                                  root))
               (claude-bridge--chat-buffers))))
    (append (cl-remove-if-not
             (lambda (b) (claude-bridge--live-p (buffer-local-value 'claude-bridge--buffer-chat b)))
             mine)
            (cl-remove-if
             (lambda (b) (claude-bridge--live-p (buffer-local-value 'claude-bridge--buffer-chat b)))
             mine))))

(defun claude-bridge--current-chat (&optional noerror)
  "Return the chat of this buffer or of the current project.
Signal an error if there is none, unless NOERROR."
  (or claude-bridge--buffer-chat
      (when-let ((buf (car (claude-bridge--project-buffers (claude-bridge--project-root)))))
        (buffer-local-value 'claude-bridge--buffer-chat buf))
      (unless noerror
        (user-error "No Claude chat here: M-x claude-bridge-chat starts one"))))

(defun claude-bridge--new-chat (root)
  "Return the buffer of a new chat of ROOT, and start its session."
  (let* ((chat (claude-bridge-model-make-chat root))
         (buf (claude-bridge-view-make-buffer
               chat (format "*claude: %s*" (claude-bridge--chat-name chat)))))
    (claude-bridge--create chat)
    buf))

;;;; Notices to the user

(defun claude-bridge--tell (format-string &rest args)
  "Show FORMAT-STRING with ARGS in the echo area, unless the minibuffer is in use.
The mode line still says what waits."
  (unless (active-minibuffer-window)
    (let ((message-log-max t))
      (apply #'message format-string args))))

(defun claude-bridge--announce-permission (chat item)
  "Say in the echo area that the permission prompt ITEM of CHAT waits."
  (claude-bridge-view-flush chat)
  (let ((hint (substitute-command-keys
               " — \\<claude-bridge-chat-mode-map>\\[claude-bridge-answer-permission] in its chat"))
        (title (claude-bridge-permission-title (claude-bridge-model-get item :request))))
    (claude-bridge--tell
     "%s%s"
     (truncate-string-to-width
      (replace-regexp-in-string "\\`Claude" (format "Claude (%s)" (claude-bridge--chat-name chat))
                                title t t)
      (max 20 (- (frame-width) (length hint) 1)) nil nil "…")
     hint)))

;;;; Client wiring

(defun claude-bridge--on-notification (method params)
  "Handle the bridge's notification METHOD with PARAMS."
  (pcase method
    ('session/event
     (let* ((id (plist-get params :sessionId))
            (chat (gethash id claude-bridge--sessions)))
       (if chat
           (claude-bridge-model-apply chat (plist-get params :event)
                                      (eq (plist-get params :replay) t))
         (push params (gethash id claude-bridge--early-events)))))
    ('session/exited
     (when-let ((chat (gethash (plist-get params :sessionId) claude-bridge--sessions)))
       (remhash (plist-get params :sessionId) claude-bridge--sessions)
       (cond
        ((eq (claude-bridge--chat-state chat) 'closed))
        ((equal (plist-get params :reason) "closed")
         (setf (claude-bridge--chat-state chat) 'closed)
         (claude-bridge-model-withdraw-permissions chat "the session was closed")
         (claude-bridge-model-notice chat "Session closed."))
        (t
         (let ((what (claude-bridge--exit-text params)))
           (claude-bridge-model-exited
            chat (format "%s; %s" what (claude-bridge--next-prompt-says chat)) t)
           (claude-bridge--tell "Claude (%s): %s" (claude-bridge--chat-name chat)
                                (car (split-string what "\n"))))))
       (claude-bridge--streaming-ended)))
    ('window/logMessage
     (when (eql (plist-get params :type) 1)
       (message "claude-bridge: %s" (plist-get params :message))))
    (_ nil)))

(defun claude-bridge--exit-text (params)
  "Return what the `session/exited' PARAMS say happened, for the user."
  (let* ((status (plist-get params :status))
         (code (plist-get status :code))
         (signal (plist-get status :signal))
         (tail (string-trim (or (plist-get status :stderrTail) "")))
         (why (plist-get params :error)))
    (concat
     (pcase (plist-get params :reason)
       ("shutdown" "Claude stopped: the bridge shut down")
       ("limit" "Claude was stopped: a session limit tripped")
       ("deadline" "Claude was stopped: a deadline passed")
       (reason (format "Claude %s%s" (if (equal reason "failed") "failed" "exited")
                       (cond (signal (format " (signal %s)" signal))
                             (code (format " (code %s)" code))
                             (t "")))))
     (if why (format ": %s" why) "")
     (if (string-empty-p tail) "" (format "\n%s\n" tail)))))

(defun claude-bridge--next-prompt-says (chat)
  "Return what CHAT's next prompt will do, now that its process ended."
  (if (claude-bridge--chat-claude-session-id chat)
      "the next prompt continues this conversation in a new process."
    "the next prompt starts a new conversation."))

(defun claude-bridge--on-request (method params)
  "Answer the bridge's request METHOD with PARAMS."
  (pcase method
    ('session/requestPermission
     (let ((chat (gethash (plist-get params :sessionId) claude-bridge--sessions)))
       (cond
        ((null chat)
         (list :behavior "deny" :message "No such session in Emacs."))
        ((run-hook-with-args-until-success 'claude-bridge-permission-functions chat params))
        (t
         (let ((item (claude-bridge-model-add-permission chat params)))
           (claude-bridge--announce-permission chat item)
           (when (numberp claude-bridge-permission-timeout)
             (run-at-time claude-bridge-permission-timeout nil
                          #'claude-bridge--permission-timed-out chat item))
           (list :behavior "defer"))))))
    (_ (jsonrpc-error :code claude-bridge-protocol-error-method-not-found
                      :message (format "%s is not handled" method)))))

(defun claude-bridge--permission-timed-out (chat item)
  "Deny the permission prompt ITEM of CHAT if it still waits.
See `claude-bridge-permission-timeout'."
  (when (claude-bridge-model-permission-pending-p chat item)
    (let ((why (format "no answer within %g s" claude-bridge-permission-timeout)))
      (claude-bridge-permission-respond
       chat item (list :behavior "deny" :message (format "Denied: %s." why))
       (format "denied: %s" why)))))

(defun claude-bridge--on-bridge-exit (msg)
  "Report once that the bridge ended with MSG, in every chat it served."
  (let (reported)
    (dolist (chat (claude-bridge-chats))
      (when (claude-bridge--live-p chat)
        (setq reported t)
        (claude-bridge-model-exited
         chat (format "%s; %s" msg (claude-bridge--next-prompt-says chat)) t)))
    (clrhash claude-bridge--sessions)
    (clrhash claude-bridge--early-events)
    (claude-bridge--streaming-ended)
    (when reported
      (claude-bridge--tell "%s" msg))))

(setq claude-bridge-client-notification-function #'claude-bridge--on-notification
      claude-bridge-client-request-function #'claude-bridge--on-request
      claude-bridge-client-exit-function #'claude-bridge--on-bridge-exit)

;;;; Sessions

(defun claude-bridge--create (chat &optional resume replay retried)
  "Start CHAT's CLI process; RESUME a CLI session id, showing it again with REPLAY.
When the bridge ends before it answers (it was shutting down), try once
more on a new bridge, unless RETRIED."
  (add-hook 'kill-emacs-query-functions #'claude-bridge--kill-emacs-query)
  (claude-bridge-model-new-process chat)
  (claude-bridge-model-restarted chat)
  (setf (claude-bridge--chat-state chat) 'starting)
  (claude-bridge-model-changed chat)
  (claude-bridge-client-call
   "session/create"
   (append (list :cwd (directory-file-name (claude-bridge--chat-cwd chat)))
           (when claude-bridge-model (list :model claude-bridge-model))
           (when claude-bridge-permission-mode
             (list :permissionMode claude-bridge-permission-mode))
           (when resume (list :resume resume))
           (when replay (list :replay t))
           claude-bridge-create-params)
   :on-result (lambda (result) (claude-bridge--created chat result))
   :on-error
   (lambda (err)
     (cond
      ((not (eq (claude-bridge--chat-state chat) 'starting)) nil)
      ((and (not retried)
            (eql (plist-get err :code) claude-bridge-protocol-error-connection-closed))
       (run-at-time 0 nil #'claude-bridge--create chat resume replay t))
      ((and resume (not replay)
            (not (eql (plist-get err :code) claude-bridge-protocol-error-connection-closed)))
       ;; A conversation continued after a crash, which the CLI cannot
       ;; resume: start afresh instead.
       (claude-bridge-model-notice
        chat (format "Could not continue the conversation (%s): a new one starts."
                     (claude-bridge-client-error-message err))
        'warning)
       (setf (claude-bridge--chat-claude-session-id chat) nil)
       (claude-bridge--create chat))
      (t
       (setf (claude-bridge--chat-queued chat) nil)
       (claude-bridge-model-exited
        chat (format "Could not start Claude: %s" (claude-bridge-client-error-message err))
        t))))))

(defun claude-bridge--created (chat result)
  "Record that CHAT's session started with RESULT; send what waited for it."
  (let ((id (plist-get result :sessionId)))
    (if (not (eq (claude-bridge--chat-state chat) 'starting))
        ;; The buffer was killed or the chat closed meanwhile.
        (claude-bridge-client-call "session/close" (list :sessionId id) :on-error #'ignore)
      (setf (claude-bridge--chat-id chat) id
            (claude-bridge--chat-pid chat) (plist-get result :pid)
            (claude-bridge--chat-warm chat) (eq (plist-get result :warm) t)
            (claude-bridge--chat-model chat) (plist-get result :model)
            (claude-bridge--chat-models chat) (append (plist-get result :models) nil)
            (claude-bridge--chat-commands chat) (append (plist-get result :commands) nil)
            (claude-bridge--chat-permission-mode chat) (plist-get result :permissionMode)
            (claude-bridge--chat-state chat) 'idle)
      (puthash id chat claude-bridge--sessions)
      (dolist (params (nreverse (gethash id claude-bridge--early-events)))
        (claude-bridge-model-apply chat (plist-get params :event)
                                   (eq (plist-get params :replay) t)))
      (remhash id claude-bridge--early-events)
      (claude-bridge-model-changed chat)
      (let ((queued (claude-bridge--chat-queued chat)))
        (setf (claude-bridge--chat-queued chat) nil)
        (dolist (entry queued)
          (claude-bridge--send-now chat (car entry) (cdr entry)))))))

(defun claude-bridge-restart (&optional chat)
  "Start CHAT's Claude process again, continuing its conversation.
CHAT defaults to this chat; it must be one whose process ended."
  (interactive)
  (let ((chat (or chat (claude-bridge--current-chat))))
    (when (claude-bridge--live-p chat)
      (user-error "Claude runs in this chat already"))
    (setf (claude-bridge--chat-id chat) nil)
    (claude-bridge--create chat (claude-bridge--chat-claude-session-id chat))))

(defun claude-bridge--close-chat (chat &optional notice)
  "Close CHAT's session gracefully; add NOTICE to its conversation if given."
  (when (claude-bridge--live-p chat)
    (let ((id (claude-bridge--chat-id chat)))
      (setf (claude-bridge--chat-state chat) 'closed
            (claude-bridge--chat-queued chat) nil)
      (claude-bridge-model-withdraw-permissions chat "the session was closed")
      (when notice (claude-bridge-model-notice chat notice))
      (when id
        (remhash id claude-bridge--sessions)
        (claude-bridge-client-call "session/close" (list :sessionId id)
                                   :on-error #'ignore :start nil))
      (claude-bridge--streaming-ended))))

(defun claude-bridge--busy-p (chat)
  "Return non-nil when CHAT has a turn running or a prompt waiting."
  (or (eq (claude-bridge--chat-state chat) 'running)
      (claude-bridge--chat-permissions chat)))

(defun claude-bridge--kill-query (chat)
  "Ask whether CHAT's buffer may be killed while Claude works in it."
  (or (not (claude-bridge--busy-p chat))
      (yes-or-no-p (format "Claude is working in %s: kill it and stop its turn? "
                           (buffer-name (claude-bridge--chat-buffer chat))))))

(defun claude-bridge--kill-emacs-query ()
  "Ask whether to quit Emacs while Claude works, see `kill-emacs-query-functions'."
  (let ((busy (cl-count-if #'claude-bridge--busy-p (claude-bridge-chats))))
    (or (zerop busy)
        (yes-or-no-p (format "Claude is working in %d chat%s; quit anyway? "
                             busy (if (= busy 1) "" "s"))))))

(defun claude-bridge--buffer-killed (chat)
  "Close CHAT, whose buffer is being killed."
  (when chat
    (if (claude-bridge-client-live-p)
        (claude-bridge--close-chat chat)
      (setf (claude-bridge--chat-state chat) 'closed))
    (setf (claude-bridge--chat-state chat) 'closed)
    (claude-bridge-view-update-indicator)))

(setq claude-bridge-view-kill-query-function #'claude-bridge--kill-query)
(add-hook 'claude-bridge-view-kill-functions #'claude-bridge--buffer-killed)

;;;; Turns

(defvar claude-bridge--saved-gc-cons-threshold nil
  "The `gc-cons-threshold' to restore when no turn streams, or nil.")

(defun claude-bridge--streaming-started ()
  "Raise `gc-cons-threshold' for a streaming turn, see the option of that name."
  (when (and claude-bridge-streaming-gc-cons-threshold
             (null claude-bridge--saved-gc-cons-threshold)
             (< gc-cons-threshold claude-bridge-streaming-gc-cons-threshold))
    (setq claude-bridge--saved-gc-cons-threshold gc-cons-threshold
          gc-cons-threshold claude-bridge-streaming-gc-cons-threshold)))

(defun claude-bridge--streaming-ended ()
  "Restore `gc-cons-threshold' when no turn of any chat is running."
  (when (and claude-bridge--saved-gc-cons-threshold
             (not (cl-some (lambda (chat) (eq (claude-bridge--chat-state chat) 'running))
                           (claude-bridge-chats))))
    (when (eql gc-cons-threshold claude-bridge-streaming-gc-cons-threshold)
      (setq gc-cons-threshold claude-bridge--saved-gc-cons-threshold))
    (setq claude-bridge--saved-gc-cons-threshold nil)))

(defun claude-bridge--turn-done (chat result)
  "Record the end of CHAT's turn with RESULT, run the hooks, tell if hidden."
  (let ((item (claude-bridge-model-turn-ended chat result)))
    (claude-bridge-view-flush chat)
    (claude-bridge--streaming-ended)
    (when (claude-bridge--live-p chat)
      (claude-bridge-client-call
       "session/getContextUsage" (list :sessionId (claude-bridge--chat-id chat))
       :on-result (lambda (r) (claude-bridge-model-set-context chat item (plist-get r :usage)))
       :on-error #'ignore))
    (unless (claude-bridge-view-visible-p chat)
      (claude-bridge--tell "Claude (%s) %s (%s)" (claude-bridge--chat-name chat)
                           (if (eq (plist-get result :interrupted) t) "was interrupted"
                             "finished")
                           (claude-bridge-view--format-cost (plist-get result :costUsd))))
    (run-hook-with-args 'claude-bridge-turn-done-hook chat result)))

(defun claude-bridge--turn-failed (chat err)
  "Record that CHAT's turn failed with the JSON-RPC error ERR."
  (when (eq (claude-bridge--chat-state chat) 'running)
    (setf (claude-bridge--chat-state chat) 'idle))
  ;; When the bridge died, its exit (which comes next) withdraws them, saying so.
  (unless (eql (plist-get err :code) claude-bridge-protocol-error-connection-closed)
    (claude-bridge-model-withdraw-permissions chat "the turn failed"))
  (claude-bridge--streaming-ended)
  ;; The bridge or the CLI died: that is told once, by its exit notice.
  (unless (memql (plist-get err :code)
                 (list claude-bridge-protocol-error-connection-closed
                       claude-bridge-protocol-error-process-failed))
    (claude-bridge-model-notice
     chat (format "Turn failed: %s" (claude-bridge-client-error-message err)) 'error)))

(defun claude-bridge--send-now (chat prompt item)
  "Send PROMPT (text or content blocks) to CHAT, whose user item is ITEM.
A new turn, or a live message into the running one."
  (let ((id (claude-bridge--chat-id chat)))
    (if (eq (claude-bridge--chat-state chat) 'running)
        (progn
          (claude-bridge-model-turn-started chat item)
          (claude-bridge-client-call
           "session/message" (list :sessionId id :prompt prompt)
           :on-error (lambda (err)
                       (claude-bridge-model-notice
                        chat (format "Not sent: %s" (claude-bridge-client-error-message err))
                        'error))))
      (claude-bridge-model-turn-started chat item)
      (claude-bridge--streaming-started)
      (claude-bridge-client-call
       "session/send" (list :sessionId id :prompt prompt)
       :on-result (lambda (result) (claude-bridge--turn-done chat result))
       :on-error (lambda (err) (claude-bridge--turn-failed chat err))))))

(defun claude-bridge-submit (chat text &optional attachments)
  "Send TEXT with ATTACHMENTS (context plists) to CHAT.
While a turn runs it goes into that turn as a live message.  A chat
whose process is gone is started again, continuing its conversation;
the prompt is sent once it is up."
  (let* ((cwd (claude-bridge--chat-cwd chat))
         (prompt (claude-bridge-model-prompt text attachments cwd))
         (item (claude-bridge-model-add-prompt
                chat text (append attachments (claude-bridge-model-mentions text cwd)))))
    (pcase (claude-bridge--chat-state chat)
      ((or 'idle 'running) (claude-bridge--send-now chat prompt item))
      (state
       (claude-bridge-model-put item :queued t)
       (setf (claude-bridge--chat-queued chat)
             (append (claude-bridge--chat-queued chat) (list (cons prompt item))))
       (pcase state
         ('new (claude-bridge--create chat))
         ((or 'exited 'closed)
          (setf (claude-bridge--chat-id chat) nil)
          (claude-bridge--create chat (claude-bridge--chat-claude-session-id chat))))))
    (when-let ((buf (claude-bridge-view-chat-buffer chat)))
      (with-current-buffer buf (setq next-error-last-buffer buf)))
    chat))

;;;; Resume

(defun claude-bridge--resume (root claude-session-id)
  "Open a chat of ROOT that continues the conversation CLAUDE-SESSION-ID.
It is shown again first.  Return the chat's buffer."
  (let* ((chat (claude-bridge-model-make-chat root))
         (buf (claude-bridge-view-make-buffer
               chat (format "*claude: %s*" (claude-bridge--chat-name chat)))))
    (claude-bridge-model-notice chat (format "Resuming %s" claude-session-id) 'quiet)
    (claude-bridge--create chat claude-session-id t)
    buf))

(provide 'claude-bridge)

;; The commands (they need what is above, and `claude-bridge' provided).
(cl-eval-when (load eval)
  (require 'claude-bridge-commands))

;;; claude-bridge.el ends here
