;;; claude-bridge-model.el --- The conversation of a claude-bridge chat, as data  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The claude-duplex-bridge authors

;; Author: The claude-duplex-bridge authors
;; URL: https://github.com/claude-duplex-bridge/claude-duplex-bridge
;; Keywords: tools, processes

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: MIT

;;; Commentary:

;; The model part of claude-bridge.el.  A chat (`claude-bridge--chat')
;; is one Claude session and its conversation as data, built from the
;; bridge's `session/event' notifications: the user's prompts,
;; assistant text accumulated from deltas, thinking, tool cards (use
;; and result), the TodoWrite checklist, permission prompts and their
;; answers, notices, each turn's cost and context usage, the chat's
;; state, its prompt history and the context attached to its next
;; prompt.  Nothing here draws: each change is recorded on the chat
;; (`claude-bridge--chat-dirty') for the view to redraw in batches, and
;; text that streamed in since the last redraw waits in the item's
;; `unseen' chunks.
;;
;; What the CLI echoes for its own purposes (`<local-command-stdout>',
;; `<command-name>', "[Request interrupted by user]", replayed input)
;; is never taken for a prompt of the user: see
;; `claude-bridge-model-echo'.  What is sent for a mention or an
;; attachment is decided in one place: `claude-bridge-model-attachment-blocks'.

;;; Code:

(require 'cl-lib)
(require 'subr-x)

(cl-defstruct (claude-bridge-item (:constructor claude-bridge-item--make)
                                  (:copier nil))
  "One entry of a conversation."
  (kind nil :documentation "\
user, text, thinking, tool, todo, result, permission or notice.")
  (text "" :documentation "Text drawn so far (for tool: the one-line summary).")
  (seen nil :documentation "Chunks streamed and drawn after `text', newest first.")
  (unseen nil :documentation "Chunks streamed since the last redraw, newest first.")
  (open nil :documentation "Non-nil while deltas may still extend the item.")
  (props nil :documentation "Kind-specific plist (tool input, result, cost...).")
  (start nil :documentation "View: marker where the item begins.")
  (end nil :documentation "View: marker where the item ends.")
  (expanded nil :documentation "View: non-nil when the collapsible body shows."))

(cl-defstruct (claude-bridge--chat (:constructor claude-bridge--chat-make)
                                   (:copier nil))
  "A chat: one Claude session of the bridge and its conversation."
  (id nil :documentation "The bridge's session id (nil until created).")
  (cwd nil :documentation "The working directory (with a final slash).")
  (pid nil :documentation "The CLI's process id.")
  (warm nil :documentation "Non-nil when the process came from the warm pool.")
  (model nil :documentation "The model, as last reported or set.")
  (models nil :documentation "Models the CLI offers (a list of plists).")
  (commands nil :documentation "Slash commands the CLI offers (a list of plists).")
  (permission-mode nil :documentation "The permission mode.")
  (claude-session-id nil :documentation "The CLI's own session id.")
  (state 'new :documentation "new, starting, idle, running, exited or closed.")
  (total-cost 0.0 :documentation "USD spent by the current CLI process.")
  (spent 0.0 :documentation "USD spent by the chat's earlier CLI processes.")
  (context nil :documentation "Last context usage plist of the CLI.")
  (items nil :documentation "Conversation items, newest first.")
  (open-items nil :documentation "Alist ((KIND . PARENT) . ITEM) of streaming items.")
  (tools nil :documentation "Hash table: toolUseId -> tool item.")
  (todo nil :documentation "The checklist item of the running turn, or nil.")
  (permissions nil :documentation "Permission items waiting for an answer, oldest first.")
  (restart nil :documentation "The exit notice offering a restart, or nil.")
  (dirty nil :documentation "Items changed since the last redraw.")
  (deltas 0 :documentation "textDelta events received.")
  (last-result nil :documentation "The last turn result (a plist).")
  (history nil :documentation "The prompts sent, newest first.")
  (attachments nil :documentation "Context for the next prompt, in order (plists).")
  (queued nil :documentation "(PROMPT . ITEM) sent before the process was up, oldest first.")
  (buffer nil :documentation "View: the chat buffer.")
  (on-change nil :documentation "Function of (CHAT) called after each change."))

;;;; Items

;; Item props are changed through this, so that an empty plist works too.
(defun claude-bridge-model-put (item key value)
  "Set property KEY of ITEM to VALUE."
  (setf (claude-bridge-item-props item)
        (plist-put (claude-bridge-item-props item) key value)))

(defun claude-bridge-model-get (item key)
  "Return property KEY of ITEM."
  (plist-get (claude-bridge-item-props item) key))

(defun claude-bridge-model-make-chat (cwd)
  "Return a new chat for the directory CWD."
  (claude-bridge--chat-make :cwd cwd :tools (make-hash-table :test #'equal)))

(defun claude-bridge-model-changed (chat &optional item)
  "Record that ITEM of CHAT changed (to be redrawn) and tell its listener."
  (when (and item (not (memq item (claude-bridge--chat-dirty chat))))
    (push item (claude-bridge--chat-dirty chat)))
  (when-let ((fn (claude-bridge--chat-on-change chat)))
    (funcall fn chat)))

(defun claude-bridge-model-redraw (chat item)
  "Have ITEM of CHAT drawn again as a whole."
  (claude-bridge-model-put item :redraw t)
  (claude-bridge-model-changed chat item))

(defun claude-bridge-model-add (chat kind text &rest props)
  "Append an item of KIND with TEXT and PROPS to CHAT; return it."
  (let ((item (claude-bridge-item--make :kind kind :text (or text "")
                                        :props props)))
    (push item (claude-bridge--chat-items chat))
    (claude-bridge-model-changed chat item)
    item))

(defun claude-bridge-model-notice (chat text &optional level &rest props)
  "Add a notice TEXT of LEVEL (info, warning or error; default info) to CHAT.
PROPS are more item properties.  Return the item."
  (apply #'claude-bridge-model-add chat 'notice text :level (or level 'info) props))

(defun claude-bridge-model-items (chat)
  "Return the items of CHAT, oldest first."
  (reverse (claude-bridge--chat-items chat)))

(defun claude-bridge-model-item-text (item)
  "Return the whole text of ITEM, including chunks not drawn yet."
  (if (or (claude-bridge-item-seen item) (claude-bridge-item-unseen item))
      (concat (claude-bridge-item-text item)
              (apply #'concat (reverse (claude-bridge-item-seen item)))
              (apply #'concat (reverse (claude-bridge-item-unseen item))))
    (claude-bridge-item-text item)))

(defun claude-bridge-model-mark-seen (item)
  "Mark ITEM's unseen chunks drawn and return them, newest first.
Nothing is copied: the chunks move to the item's `seen' list."
  (let ((new (claude-bridge-item-unseen item)))
    (setf (claude-bridge-item-seen item) (append new (claude-bridge-item-seen item))
          (claude-bridge-item-unseen item) nil)
    new))

(defun claude-bridge-model--text-equal-p (item text)
  "Return non-nil when the whole text of ITEM is TEXT, without building it."
  (let ((pos (length text))
        (ok t))
    ;; Walk the chunks from the newest (the end of the text) backwards.
    (dolist (chunk (append (claude-bridge-item-unseen item) (claude-bridge-item-seen item)))
      (setq ok (and ok (>= pos (length chunk))
                    (eq t (compare-strings text (- pos (length chunk)) pos chunk nil nil))
                    (setq pos (- pos (length chunk))))))
    (and ok (= pos (length (claude-bridge-item-text item)))
         (eq t (compare-strings text 0 pos (claude-bridge-item-text item) nil nil)))))

(defun claude-bridge-model-take-unseen (item)
  "Mark ITEM's unseen chunks drawn and return them as one string.
The text is not copied as it grows: streaming makes little garbage."
  (let ((new (apply #'concat (nreverse (claude-bridge-item-unseen item)))))
    (setf (claude-bridge-item-unseen item) nil)
    (unless (string-empty-p new) (push new (claude-bridge-item-seen item)))
    new))

(defun claude-bridge-model-assistant-text (chat)
  "Return the text of CHAT's last assistant reply (its text items)."
  (let (parts)
    (cl-loop for item in (claude-bridge--chat-items chat)
             until (eq (claude-bridge-item-kind item) 'user)
             when (eq (claude-bridge-item-kind item) 'text)
             do (push (claude-bridge-model-item-text item) parts))
    (string-join parts "")))

(defun claude-bridge-model-tool (chat tool-use-id)
  "Return CHAT's tool item for TOOL-USE-ID, or nil."
  (gethash tool-use-id (claude-bridge--chat-tools chat)))

(defun claude-bridge-model-total-cost (chat)
  "Return what CHAT spent in all, over every CLI process it had, in USD."
  (+ (claude-bridge--chat-spent chat) (claude-bridge--chat-total-cost chat)))

;;;; Streaming

(defun claude-bridge-model--close-open (chat &optional parent)
  "Close CHAT's streaming items of PARENT (a parentToolUseId or nil)."
  (setf (claude-bridge--chat-open-items chat)
        (cl-remove-if (lambda (entry)
                        (when (equal (cdar entry) parent)
                          (setf (claude-bridge-item-open (cdr entry)) nil)
                          t))
                      (claude-bridge--chat-open-items chat))))

(defun claude-bridge-model--stream (chat kind parent chunk)
  "Append CHUNK to CHAT's streaming item of KIND for PARENT."
  (let* ((key (cons kind parent))
         (item (alist-get key (claude-bridge--chat-open-items chat) nil nil #'equal)))
    (unless item
      (claude-bridge-model--close-open chat parent)
      (setq item (claude-bridge-model-add chat kind "" :parent parent))
      (setf (claude-bridge-item-open item) t)
      (push (cons key item) (claude-bridge--chat-open-items chat)))
    (push chunk (claude-bridge-item-unseen item))
    (claude-bridge-model-changed chat item)))

(defun claude-bridge-model--complete (chat kind parent text &optional aborted)
  "Finish CHAT's streaming item of KIND for PARENT with its whole TEXT.
Without a streaming item (no deltas came), add one.  ABORTED marks a
reply cut short by an interrupt."
  (let* ((key (cons kind parent))
         (item (alist-get key (claude-bridge--chat-open-items chat) nil nil #'equal)))
    (if (null item)
        (progn
          (claude-bridge-model--close-open chat parent)
          (setq item (claude-bridge-model-add chat kind text :parent parent)))
      (unless (claude-bridge-model--text-equal-p item text)
        ;; Deltas and the final block disagree: the block is the truth.
        (setf (claude-bridge-item-unseen item) nil
              (claude-bridge-item-seen item) nil
              (claude-bridge-item-text item) text)
        (claude-bridge-model-put item :redraw t))
      (setf (claude-bridge-item-open item) nil)
      (setf (claude-bridge--chat-open-items chat)
            (cl-remove key (claude-bridge--chat-open-items chat)
                       :key #'car :test #'equal)))
    (when aborted
      (claude-bridge-model-put item :aborted t))
    (claude-bridge-model-changed chat item)
    item))

;;;; Tools

(defun claude-bridge-model-tool-summary (name input)
  "Return a one-line summary of a call of tool NAME with INPUT (a plist)."
  (let ((detail
         (or (plist-get input :command)
             (plist-get input :file_path)
             (plist-get input :notebook_path)
             (plist-get input :path)
             (plist-get input :pattern)
             (plist-get input :url)
             (plist-get input :query)
             (plist-get input :description)
             (let ((qs (plist-get input :questions)))
               (and (vectorp qs) (> (length qs) 0)
                    (plist-get (aref qs 0) :question)))
             "")))
    (setq detail (car (split-string (format "%s" detail) "\n")))
    (if (string-empty-p detail) name (format "%s: %s" name detail))))

(defun claude-bridge-model-tool-file (input)
  "Return the file a tool call with INPUT works on, or nil."
  (let ((file (or (plist-get input :file_path) (plist-get input :notebook_path))))
    (and (stringp file) (not (string-empty-p file)) file)))

(defun claude-bridge-model--todo (chat input)
  "Show the TodoWrite checklist of INPUT in CHAT, updating this turn's one."
  (let ((todos (append (plist-get input :todos) nil))
        (item (claude-bridge--chat-todo chat)))
    (if (and item (memq item (claude-bridge--chat-items chat)))
        (progn (claude-bridge-model-put item :todos todos)
               (claude-bridge-model-redraw chat item))
      (setf (claude-bridge--chat-todo chat)
            (claude-bridge-model-add chat 'todo "Plan" :todos todos)))))

;;;; What the CLI echoes

(defconst claude-bridge-model--echo-tags
  '(("local-command-stdout" . "%s")
    ("local-command-stderr" . "%s")
    ("bash-stdout" . "%s")
    ("bash-stderr" . "%s")
    ("bash-input" . "! %s"))
  "Tags of the CLI's echoes whose content is worth a quiet notice.")

(defun claude-bridge-model--tag (tag text)
  "Return the content of the first <TAG>...</TAG> of TEXT, or nil."
  (when (string-match (format "<%s>\\(\\(?:.\\|\n\\)*?\\)</%s>" tag tag) text)
    (string-trim (match-string 1 text))))

(defun claude-bridge-model--tagged-echo (text replay)
  "Return what to show for TEXT when it is a tagged echo of the CLI.
That is (notice . CONTENT) in a REPLAY, `drop' live or when empty,
nil when TEXT holds none of `claude-bridge-model--echo-tags'."
  (cl-some (lambda (entry)
             (when-let ((inner (claude-bridge-model--tag (car entry) text)))
               (if (or (not replay) (string-empty-p inner))
                   'drop
                 (cons 'notice (format (cdr entry) inner)))))
           claude-bridge-model--echo-tags))

(defun claude-bridge-model-echo (text replay)
  "Classify user-side TEXT the CLI printed; REPLAY is non-nil in history.
Return (prompt . TEXT) for something the user typed (only in a
replayed conversation: live prompts are drawn when they are sent),
\(notice . TEXT) for an echo worth a quiet notice, or nil to show
nothing."
  (let* ((text (or text ""))
         (tagged (claude-bridge-model--tagged-echo text replay)))
    (cond
     ((string-prefix-p "[Request interrupted" text)
      ;; Live, the turn's summary line says so already.
      (and replay (cons 'notice "Interrupted.")))
     ((string-match-p "\\`\\s-*<local-command-caveat>" text) nil)
     ((string-match-p "\\`\\s-*<command-name>" text)
      (and replay
           (cons 'notice
                 (string-trim
                  (concat (claude-bridge-model--tag "command-name" text) " "
                          (or (claude-bridge-model--tag "command-args" text) ""))))))
     (tagged (and (consp tagged) tagged))
     ((string-match-p "\\`\\s-*<[a-z-]+>" text) nil) ; another echo of the CLI
     (replay (cons 'prompt text))
     ;; Live user-side text is never the user's prompt: a quiet notice.
     ((string-empty-p (string-trim text)) nil)
     (t (cons 'notice (string-trim text))))))

;;;; Events

(defun claude-bridge-model--system (chat event)
  "Apply the `system' EVENT (its subtype and data) to CHAT."
  (let ((data (plist-get event :data)))
    (pcase (plist-get event :subtype)
      ("api_retry"
       (let ((delay (plist-get data :retry_delay_ms)))
         (claude-bridge-model-notice
          chat
          (format "API %s: retrying, attempt %s of %s, in %s"
                  (or (plist-get data :error) (plist-get data :error_status) "error")
                  (plist-get data :attempt) (plist-get data :max_retries)
                  (if (numberp delay) (format "%.1f s" (/ delay 1000.0)) "a moment"))
          'warning)))
      ("compact_boundary"
       (claude-bridge-model-notice chat "The conversation was compacted."))
      (_ nil))))

(defun claude-bridge-model--unknown (chat event)
  "Apply the `unknown' EVENT (a CLI frame the bridge does not model) to CHAT."
  (let ((frame (plist-get event :frame)))
    (when (equal (plist-get event :frameType) "rate_limit_event")
      (let* ((info (plist-get frame :rate_limit_info))
             (status (plist-get info :status))
             (resets (plist-get info :resetsAt)))
        (unless (member status '(nil "allowed"))
          (claude-bridge-model-notice
           chat
           (format "Rate limit: %s%s" status
                   (if (numberp resets)
                       (format-time-string ", resets at %H:%M" resets)
                     ""))
           'warning))))))

(defun claude-bridge-model--result (chat event)
  "Apply the `result' EVENT (one CLI result of the turn) to CHAT."
  (claude-bridge-model--close-open chat nil)
  (let ((total (or (plist-get event :totalCostUsd) 0.0)))
    (when (> total 0)
      (setf (claude-bridge--chat-total-cost chat) total))
    (when (and (eq (plist-get event :isError) t)
               (not (member (plist-get event :terminalReason)
                            '("aborted_streaming" "aborted_tools"))))
      (let* ((text (or (plist-get event :text) (plist-get event :subtype)))
             (status (plist-get event :apiErrorStatus))
             (last (car (claude-bridge--chat-items chat)))
             (hint (and (memql status '(401 403))
                        " (authentication failed: check the API key or log in with `claude')")))
        (if (and last (eq (claude-bridge-item-kind last) 'text)
                 (equal (claude-bridge-model-item-text last) text))
            ;; The CLI wrote the error as the reply too: one notice, not two.
            (progn
              (setf (claude-bridge-item-kind last) 'notice
                    (claude-bridge-item-seen last) nil
                    (claude-bridge-item-unseen last) nil
                    (claude-bridge-item-text last) (concat "Error: " text (or hint "")))
              (claude-bridge-model-put last :level 'error)
              (claude-bridge-model-redraw chat last))
          (claude-bridge-model-notice chat (concat "Error: " text (or hint "")) 'error))))))

(defun claude-bridge-model-apply (chat event &optional replay)
  "Apply EVENT, a `session/event' event plist, to CHAT.
REPLAY is non-nil for past events of a resumed conversation."
  (let ((parent (plist-get event :parentToolUseId)))
    (pcase (plist-get event :type)
      ("init"
       (setf (claude-bridge--chat-model chat)
             (or (plist-get event :model) (claude-bridge--chat-model chat)))
       (when-let ((mode (plist-get event :permissionMode)))
         (setf (claude-bridge--chat-permission-mode chat) mode))
       (when-let ((id (plist-get event :claudeSessionId)))
         (setf (claude-bridge--chat-claude-session-id chat) id))
       (claude-bridge-model-changed chat))
      ("status"
       (when-let ((mode (plist-get event :permissionMode)))
         (setf (claude-bridge--chat-permission-mode chat) mode)
         (claude-bridge-model-changed chat)))
      ("system" (claude-bridge-model--system chat event))
      ("unknown" (claude-bridge-model--unknown chat event))
      ("textDelta"
       (cl-incf (claude-bridge--chat-deltas chat))
       (claude-bridge-model--stream chat 'text parent (plist-get event :text)))
      ("thinkingDelta"
       (claude-bridge-model--stream chat 'thinking parent (plist-get event :thinking)))
      ("assistantText"
       (claude-bridge-model--complete chat 'text parent (plist-get event :text)
                                      (eq (plist-get event :aborted) t)))
      ("thinking"
       (claude-bridge-model--complete chat 'thinking parent (plist-get event :thinking)))
      ("toolUse"
       (claude-bridge-model--close-open chat parent)
       (let ((name (plist-get event :name))
             (input (plist-get event :input)))
         (if (equal name "TodoWrite")
             (claude-bridge-model--todo chat input)
           (puthash (plist-get event :toolUseId)
                    (claude-bridge-model-add
                     chat 'tool (claude-bridge-model-tool-summary name input)
                     :id (plist-get event :toolUseId) :name name :input input
                     :parent parent)
                    (claude-bridge--chat-tools chat)))))
      ("toolResult"
       (claude-bridge-model--close-open chat parent)
       (when-let ((item (claude-bridge-model-tool chat (plist-get event :toolUseId))))
         (claude-bridge-model-put item :result (plist-get event :content))
         (claude-bridge-model-put item :error (eq (plist-get event :isError) t))
         (claude-bridge-model-redraw chat item)))
      ("userText"
       (claude-bridge-model--close-open chat parent)
       (pcase (claude-bridge-model-echo
               (plist-get event :text)
               (and replay (not (eq (plist-get event :isReplay) t))))
         (`(prompt . ,text)
          (let ((label (claude-bridge-model-attachment-label text))
                (last (car (claude-bridge--chat-items chat))))
            (cond
             ((and label last (eq (claude-bridge-item-kind last) 'user))
              (claude-bridge-model-put
               last :attachments
               (append (claude-bridge-model-get last :attachments) (list label)))
              (claude-bridge-model-redraw chat last))
             (label (claude-bridge-model-notice chat (format "+ %s" label) 'quiet))
             (t
              (push text (claude-bridge--chat-history chat))
              (claude-bridge-model-add chat 'user text :replay t)))))
         (`(notice . ,text) (claude-bridge-model-notice chat text 'quiet))))
      ("result" (claude-bridge-model--result chat event))
      ("permissionAutoDenied"
       (when-let ((item (claude-bridge-model-permission chat (plist-get event :requestId))))
         (claude-bridge-model-withdraw-permission chat item "denied by the bridge"))
       (claude-bridge-model-notice chat (plist-get event :message) 'warning))
      ("lagged"
       (claude-bridge-model-notice
        chat (format "%s events were dropped (Emacs fell behind)." (plist-get event :missed))
        'warning))
      ("invalidLine"
       (claude-bridge-model-notice chat (format "The CLI printed: %s" (plist-get event :line))
                                   'warning))
      (_ nil))))

;;;; Turns

(defun claude-bridge-model-turn-started (chat item)
  "Record that the prompt of ITEM (a user item) was sent to CHAT.
It starts a turn, or goes into the running one as a live message."
  ;; A live message leaves the streaming reply open: it goes on above it.
  (unless (eq (claude-bridge--chat-state chat) 'running)
    (claude-bridge-model--close-open chat nil)
    (setf (claude-bridge--chat-todo chat) nil
          (claude-bridge--chat-state chat) 'running))
  (claude-bridge-model-put item :queued nil)
  (claude-bridge-model-redraw chat item))

(defun claude-bridge-model-add-prompt (chat text attachments)
  "Add the user's prompt TEXT with ATTACHMENTS (their labels are shown) to CHAT.
It is remembered in the chat's history.  Return its item."
  (push text (claude-bridge--chat-history chat))
  (claude-bridge-model-add chat 'user text
                           :attachments (mapcar (lambda (a) (plist-get a :label))
                                                attachments)))

(defun claude-bridge-model-turn-ended (chat result)
  "Record the end of CHAT's turn with RESULT (a `session/send' result).
Return the summary item."
  (claude-bridge-model--close-open chat nil)
  (let ((total (or (plist-get result :totalCostUsd) 0.0)))
    (setf (claude-bridge--chat-total-cost chat)
          (max total (claude-bridge--chat-total-cost chat))
          (claude-bridge--chat-last-result chat) result)
    (when (eq (claude-bridge--chat-state chat) 'running)
      (setf (claude-bridge--chat-state chat) 'idle))
    (when-let ((id (plist-get result :claudeSessionId)))
      (setf (claude-bridge--chat-claude-session-id chat) id))
    (claude-bridge-model-withdraw-permissions chat "the turn ended")
    (claude-bridge-model-add chat 'result nil
                             :cost (or (plist-get result :costUsd) 0.0)
                             :total (claude-bridge-model-total-cost chat)
                             :duration (plist-get result :durationMs)
                             :interrupted (eq (plist-get result :interrupted) t)
                             :usage (plist-get result :usage))))

(defun claude-bridge-model-set-context (chat item usage)
  "Record context USAGE (the CLI's plist) on CHAT and its summary ITEM."
  (setf (claude-bridge--chat-context chat) usage)
  (when item
    (claude-bridge-model-put item :context usage)
    (claude-bridge-model-redraw chat item)))

(defun claude-bridge-model-new-process (chat)
  "Record that a new CLI process of CHAT begins; count what the last one spent."
  (setf (claude-bridge--chat-spent chat) (claude-bridge-model-total-cost chat)
        (claude-bridge--chat-total-cost chat) 0.0))

;;;; Permissions

(defun claude-bridge-model-add-permission (chat request)
  "Record REQUEST (a `session/requestPermission' params plist) on CHAT.
Return its item, which waits for an answer.  The input of the tool
call it is about goes with it: some requests (ExitPlanMode) leave
their input empty."
  (let* ((tool (claude-bridge-model-tool chat (plist-get request :toolUseId)))
         (item (claude-bridge-model-add
                chat 'permission
                (claude-bridge-model-tool-summary
                 (or (plist-get request :displayName) (plist-get request :toolName))
                 (plist-get request :input))
                :request request
                :tool-input (and tool (claude-bridge-model-get tool :input)))))
    (setf (claude-bridge--chat-permissions chat)
          (append (claude-bridge--chat-permissions chat) (list item)))
    item))

(defun claude-bridge-model-permission (chat request-id)
  "Return CHAT's waiting permission item of REQUEST-ID, or nil."
  (cl-find request-id (claude-bridge--chat-permissions chat)
           :key (lambda (item) (plist-get (claude-bridge-model-get item :request) :requestId))
           :test #'equal))

(defun claude-bridge-model-permission-pending-p (chat item)
  "Return non-nil while permission ITEM of CHAT waits for an answer."
  (and (memq item (claude-bridge--chat-permissions chat)) t))

(defun claude-bridge-model-answer-permission (chat item answer &optional withdrawn)
  "Record that permission ITEM of CHAT ended as ANSWER (a string).
WITHDRAWN non-nil means it was never answered: it can no longer be."
  (setf (claude-bridge--chat-permissions chat)
        (delq item (claude-bridge--chat-permissions chat)))
  (claude-bridge-model-put item :answer answer)
  (claude-bridge-model-put item :withdrawn withdrawn)
  (claude-bridge-model-redraw chat item))

(defvar claude-bridge-model-withdraw-functions nil
  "Functions called with (CHAT ITEM) when a permission prompt is withdrawn.
The permission part closes what it opened for the prompt (its diff).")

(defun claude-bridge-model-withdraw-permission (chat item answer)
  "End the permission prompt ITEM of CHAT as ANSWER, without the user's answer.
What the prompt opened is closed (`claude-bridge-model-withdraw-functions')."
  (claude-bridge-model-answer-permission chat item answer t)
  (run-hook-with-args 'claude-bridge-model-withdraw-functions chat item))

(defun claude-bridge-model-withdraw-permissions (chat reason)
  "Withdraw every waiting permission prompt of CHAT, because of REASON."
  (dolist (item (claude-bridge--chat-permissions chat))
    (claude-bridge-model-withdraw-permission chat item (format "withdrawn: %s" reason))))

(defun claude-bridge-model-exited (chat reason &optional restart)
  "Record that CHAT's process is gone, for REASON (a string).
Waiting prompts are withdrawn.  RESTART non-nil offers to start again."
  (claude-bridge-model--close-open chat nil)
  (setf (claude-bridge--chat-state chat) 'exited)
  (claude-bridge-model-withdraw-permissions chat (car (split-string reason ";")))
  (let ((item (claude-bridge-model-notice chat reason 'warning :restart restart)))
    (when restart
      (claude-bridge-model-restarted chat)
      (setf (claude-bridge--chat-restart chat) item))
    item))

(defun claude-bridge-model-restarted (chat)
  "Record that CHAT restarted: take the restart button off its exit notice."
  (when-let ((item (claude-bridge--chat-restart chat)))
    (setf (claude-bridge--chat-restart chat) nil)
    (claude-bridge-model-put item :restart nil)
    (claude-bridge-model-redraw chat item)))

;;;; The next prompt's context

(defun claude-bridge-model-attach (chat attachment)
  "Add ATTACHMENT (a plist with at least :kind and :label) to CHAT's next prompt.
An attachment with the same label replaces the earlier one."
  (setf (claude-bridge--chat-attachments chat)
        (append (cl-remove (plist-get attachment :label)
                           (claude-bridge--chat-attachments chat)
                           :key (lambda (a) (plist-get a :label)) :test #'equal)
                (list attachment)))
  (claude-bridge-model-changed chat))

(defun claude-bridge-model-detach (chat label)
  "Remove the attachment LABEL from CHAT's next prompt; nil for all of them."
  (setf (claude-bridge--chat-attachments chat)
        (and label
             (cl-remove label (claude-bridge--chat-attachments chat)
                        :key (lambda (a) (plist-get a :label)) :test #'equal)))
  (claude-bridge-model-changed chat))

(defconst claude-bridge-model-image-types
  '(("png" . "image/png") ("jpg" . "image/jpeg") ("jpeg" . "image/jpeg")
    ("gif" . "image/gif") ("webp" . "image/webp"))
  "Image file extensions the Messages API takes, with their media types.")

(defconst claude-bridge-model-max-file-bytes (* 256 1024)
  "The most bytes of a mentioned file sent with a prompt.")

(defun claude-bridge-model--file-text (file)
  "Return the text of FILE, at most `claude-bridge-model-max-file-bytes' of it."
  (with-temp-buffer
    (insert-file-contents file nil 0 claude-bridge-model-max-file-bytes)
    (let ((text (buffer-string))
          (size (file-attribute-size (file-attributes file))))
      (if (and size (> size claude-bridge-model-max-file-bytes))
          (format "%s\n[... %d more bytes not shown]" text
                  (- size claude-bridge-model-max-file-bytes))
        text))))

(defun claude-bridge-model--directory-text (dir)
  "Return a listing of DIR, one entry a line, folders with a final slash."
  (mapconcat (lambda (f)
               (if (file-directory-p (expand-file-name f dir)) (concat f "/") f))
             (directory-files dir nil directory-files-no-dot-files-regexp)
             "\n"))

(defun claude-bridge-model-attachment-blocks (attachment)
  "Return the Messages API content blocks that send ATTACHMENT.
This is the one place that decides what a mention or an attachment
becomes on the wire: a file's or a region's text in a fenced block
under its name, a folder's listing, an image as a base64 image block.
`claude-bridge-model-attachment-label' recognizes them in a transcript."
  (let ((label (plist-get attachment :label)))
    (pcase (plist-get attachment :kind)
      ('image
       (list (list :type "image"
                   :source (list :type "base64"
                                 :media_type (plist-get attachment :media-type)
                                 :data (plist-get attachment :data)))))
      ('directory
       (list (list :type "text"
                   :text (format "[Attached folder %s]\n%s" label
                                 (claude-bridge-model--directory-text
                                  (plist-get attachment :path))))))
      ('file
       (list (list :type "text"
                   :text (format "[Attached file %s]\n```\n%s\n```" label
                                 (string-trim-right
                                  (claude-bridge-model--file-text
                                   (plist-get attachment :path)))))))
      (_                                ; a region or a buffer's text
       (list (list :type "text"
                   :text (format "[Attached %s]\n```%s\n%s\n```" label
                                 (or (plist-get attachment :language) "")
                                 (string-trim-right (plist-get attachment :text)))))))))

(defun claude-bridge-model-attachment-label (text)
  "Return the label of the attachment TEXT is, as sent by this package, or nil.
TEXT is a text block of a user message: in a replayed conversation, an
attachment is shown with its prompt, not as a prompt of its own."
  (when (string-match "\\`\\[Attached \\(?:file \\|folder \\)?\\([^]\n]+\\)\\]\n" text)
    (match-string 1 text)))

(defun claude-bridge-model-mentions (text root)
  "Return attachments for the @-mentions in TEXT of files and folders of ROOT.
A mention is @ followed by a path relative to ROOT (or absolute) that
exists; other @ words are left alone."
  (let ((start 0) found)
    (while (string-match "\\(?:\\`\\|[[:space:](]\\)@\\([^[:space:]]+\\)" text start)
      (setq start (match-end 0))
      (let* ((name (string-trim-right (match-string 1 text) "[.,;:!?)]+"))
             (path (expand-file-name name root)))
        (when (and (not (string-empty-p name)) (file-exists-p path)
                   (not (member name (mapcar (lambda (a) (plist-get a :label)) found))))
          (push (if (file-directory-p path)
                    (list :kind 'directory :path path :label name)
                  (list :kind 'file :path path :label name))
                found))))
    (nreverse found)))

(defun claude-bridge-model-prompt (text attachments root)
  "Return what `session/send' sends for TEXT with ATTACHMENTS, in ROOT.
A plain string when there is no context; else a vector of content
blocks: TEXT, then each attachment and each @-mention of TEXT."
  (let ((context (append attachments
                         (cl-remove-if (lambda (m)
                                         (member (plist-get m :label)
                                                 (mapcar (lambda (a) (plist-get a :label))
                                                         attachments)))
                                       (claude-bridge-model-mentions text root)))))
    ;; The text first: the CLI titles the conversation with its first block.
    (if (null context)
        text
      (vconcat (unless (string-empty-p text)
                 (list (list :type "text" :text text)))
               (mapcan #'claude-bridge-model-attachment-blocks context)))))

(provide 'claude-bridge-model)
;;; claude-bridge-model.el ends here
